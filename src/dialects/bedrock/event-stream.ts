import { crc32 } from 'node:zlib';
import { gatewayError } from '../../wire/gateway-error.js';
import { EventTooLargeError } from '../../wire/event-too-large.js';

/** One message of an `application/vnd.amazon.eventstream` body: its string headers and its payload. */
export interface EventMessage {
  /** Headers of string type by name (`:message-type`, `:event-type`, `:exception-type`, `:content-type`); others are skipped. */
  readonly headers: ReadonlyMap<string, string>;
  readonly payload: Buffer;
}

/** Total length, headers length, prelude CRC. */
const PRELUDE_BYTES = 12;
/** The prelude and the message CRC. */
const OVERHEAD_BYTES = 16;

/**
 * Reads AWS event-stream messages out of a body cut at any byte: prelude (total length, headers length, CRC32
 * of those 8 bytes), headers, payload, CRC32 of the whole message. A message is refused as soon as its prelude
 * is read when it announces more than `maxMessageBytes` (nothing of that size is ever allocated or waited for),
 * and when a CRC or a length does not hold (invalid_upstream_response). Reads are kept as they came until a
 * message is whole, then joined once.
 */
export class EventStreamDecoder {
  private pieces: Buffer[] = [];
  private buffered = 0;
  /** The total length of the message being read, once its prelude is checked. */
  private expected: number | undefined;

  constructor(
    private readonly maxMessageBytes: number,
    private readonly providerId: string,
  ) {}

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.pieces.push(chunk);
    this.buffered += chunk.length;
  }

  /** The next whole message; undefined until its bytes are all there. Throws on a broken or oversized message. */
  next(): EventMessage | undefined {
    if (this.expected === undefined) {
      if (this.buffered < PRELUDE_BYTES) return undefined;
      this.expected = this.prelude(this.front(PRELUDE_BYTES));
    }
    if (this.buffered < this.expected) return undefined;
    const message = this.front(this.expected);
    this.take(this.expected);
    this.expected = undefined;
    return this.decode(message);
  }

  /** Whether bytes of an unfinished message are held: the body ended inside a message. */
  get partial(): boolean {
    return this.buffered > 0;
  }

  /** The first `bytes` bytes, the pieces that hold them joined once (only those). */
  private front(bytes: number): Buffer {
    let first = this.pieces[0]!;
    if (first.length >= bytes) return first.subarray(0, bytes);
    let joined = 1;
    for (let have = first.length; have < bytes; joined++) have += this.pieces[joined]!.length;
    first = Buffer.concat(this.pieces.slice(0, joined));
    this.pieces.splice(0, joined, first);
    return first.subarray(0, bytes);
  }

  private take(bytes: number): void {
    const first = this.pieces[0]!;
    if (first.length === bytes) this.pieces.shift();
    else this.pieces[0] = first.subarray(bytes);
    this.buffered -= bytes;
  }

  /** The message's total length, once its prelude holds together and the message is not too large. */
  private prelude(prelude: Buffer): number {
    const total = prelude.readUInt32BE(0);
    const headers = prelude.readUInt32BE(4);
    if (crc32(prelude.subarray(0, 8)) !== prelude.readUInt32BE(8)) throw this.broken('a message whose prelude CRC does not match');
    if (total > this.maxMessageBytes) throw new EventTooLargeError(this.maxMessageBytes);
    if (total < OVERHEAD_BYTES || headers > total - OVERHEAD_BYTES) throw this.broken(`a message whose lengths do not fit (total ${total}, headers ${headers})`);
    return total;
  }

  private decode(message: Buffer): EventMessage {
    const end = message.length - 4;
    if (crc32(message.subarray(0, end)) !== message.readUInt32BE(end)) throw this.broken('a message whose CRC does not match');
    const headersEnd = PRELUDE_BYTES + message.readUInt32BE(4);
    const headers = new Map<string, string>();
    let at = PRELUDE_BYTES;
    while (at < headersEnd) {
      const nameLength = message[at]!;
      const name = message.toString('utf8', at + 1, at + 1 + nameLength);
      at += 1 + nameLength;
      if (at >= headersEnd) throw this.broken('a header without a value');
      const type = message[at++]!;
      const size = valueSize(type, message, at, headersEnd);
      if (size === undefined || at + size > headersEnd) throw this.broken(`a header ${JSON.stringify(name.slice(0, 40))} that does not fit its message`);
      if (type === STRING) headers.set(name, message.toString('utf8', at + 2, at + size));
      at += size;
    }
    return { headers, payload: message.subarray(headersEnd, end) };
  }

  private broken(what: string) {
    return gatewayError('invalid_upstream_response', `The provider "${this.providerId}" sent ${what} in its event stream.`, { provider: this.providerId });
  }
}

const STRING = 7;
/** Bytes of each fixed-size header value type: true, false, byte, short, integer, long, (6 and 7 are sized), timestamp, uuid. */
const FIXED_SIZES: Readonly<Record<number, number>> = { 0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16 };

/** The bytes of a header value of `type` at `at`; undefined for an unknown type or a length that runs past the headers. */
function valueSize(type: number, message: Buffer, at: number, headersEnd: number): number | undefined {
  if (type === 6 || type === STRING) return at + 2 <= headersEnd ? 2 + message.readUInt16BE(at) : undefined;
  return FIXED_SIZES[type];
}
