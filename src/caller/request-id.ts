import { randomFillSync } from 'node:crypto';

/** A caller's id is kept only when it is short and plain, so it is safe in logs and in upstream headers. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** Random bytes for this many ids are drawn at once, as node's randomUUID does. */
const IDS_PER_DRAW = 128;
const random = Buffer.alloc(16 * IDS_PER_DRAW);
let drawn = IDS_PER_DRAW;

export function requestIdFor(callerValue: string | string[] | undefined): string {
  if (typeof callerValue === 'string' && SANE_REQUEST_ID.test(callerValue)) return callerValue;
  return `req_${randomUuidHex()}`;
}

/**
 * A random (version 4) UUID as 32 hex digits, without its dashes: hex-encoded in one call, where
 * `randomUUID().replaceAll('-', '')` builds the dashed form piece by piece and then copies it (issue 40).
 */
function randomUuidHex(): string {
  if (drawn === IDS_PER_DRAW) {
    randomFillSync(random);
    drawn = 0;
  }
  const at = 16 * drawn++;
  random[at + 6] = (random[at + 6]! & 0x0f) | 0x40;
  random[at + 8] = (random[at + 8]! & 0x3f) | 0x80;
  return random.toString('hex', at, at + 16);
}
