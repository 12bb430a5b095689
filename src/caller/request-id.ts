import { randomUUID } from 'node:crypto';

/** A caller's id is kept only when it is short and plain, so it is safe in logs and in upstream headers. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

export function requestIdFor(callerValue: string | string[] | undefined): string {
  if (typeof callerValue === 'string' && SANE_REQUEST_ID.test(callerValue)) return callerValue;
  return `req_${randomUUID().replaceAll('-', '')}`;
}
