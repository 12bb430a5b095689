/**
 * A stream broke a per-stream limit of what the gateway holds for it (README: Streaming limits): more
 * held text than MAX_UPSTREAM_BODY_BYTES, or more open content blocks than a dialect allows. The engine
 * ends the stream with invalid_upstream_response, as for an event over the limit.
 */
export class StreamLimitError extends Error {
  /** `what` completes "The provider "x" sent a stream that …". */
  constructor(readonly what: string) {
    super(`an upstream stream ${what}`);
    this.name = 'StreamLimitError';
  }
}

/**
 * What one piece of held text costs beyond its characters: V8 keeps each appended piece as a string of its
 * own plus a rope node joining it, so a provider sending one-character deltas must not hold 50 bytes per
 * character charged one.
 */
export const HELD_PIECE_OVERHEAD_CHARS = 32;

/**
 * Everything a dialect accumulates over one stream (thinking text, signatures, tool arguments, a block
 * as it started), charged as it is held and never refunded: the total over the stream is bounded, so a
 * provider can neither outgrow one event's limit across many events nor grow the heap without end.
 */
export class StreamBudget {
  #left: number;

  constructor(readonly limit: number) {
    this.#left = limit;
  }

  /** Charges `chars` characters held as one more piece; throws StreamLimitError past the limit. */
  hold(chars: number): void {
    this.#left -= chars + HELD_PIECE_OVERHEAD_CHARS;
    if (this.#left < 0) throw new StreamLimitError(`sent a stream whose held text (thinking, signatures, tool input) outgrew ${this.limit} characters`);
  }
}
