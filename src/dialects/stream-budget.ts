/**
 * A stream broke a per-stream limit of what the gateway holds for it (docs/chat-completions.md): more
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

/** All streams together hold as much as MAX_STREAM_BYTES_IN_FLIGHT allows: this one ends with overloaded, the others go on. */
export class StreamsFullError extends Error {
  constructor(readonly total: number) {
    super(`the streams in flight hold all of ${total} bytes`);
    this.name = 'StreamsFullError';
  }
}

/**
 * What one piece of held text costs beyond its characters, in bytes: V8 keeps each appended piece as a string
 * of its own plus a rope node joining it, so a provider sending one-character deltas must not hold 50 bytes per
 * character charged one.
 */
export const HELD_PIECE_OVERHEAD_BYTES = 32;

/** Text beyond Latin-1 is stored two bytes a character: what a held character costs while it is held. */
export const HELD_BYTES_PER_CHAR = 2;

/**
 * What a held character costs at its peak, copies included: its two bytes times the copies made of it when the
 * block that holds it closes (its JSON, the chunk carrying it, the inbound writer's parse and its own event, the
 * caller's frames as one string). Bounded per stream by MAX_UPSTREAM_BODY_BYTES.
 */
export const HELD_PEAK_BYTES_PER_CHAR = 16;

/**
 * The memory all streams hold at once, in bytes (MAX_STREAM_BYTES_IN_FLIGHT): the event each is reading, and
 * the text each holds for later events, with the copies made of them. Single-threaded: no locking.
 */
export class StreamsInFlight {
  #used = 0;

  constructor(readonly total: number) {}

  /** An account for one stream; everything it holds goes back at `release()`. */
  open(): StreamHoldings {
    return new StreamHoldings(this.total, (bytes) => {
      if (bytes > 0 && this.#used + bytes > this.total) return false;
      this.#used += bytes;
      return true;
    });
  }
}

/** What one stream holds, charged to the process-wide StreamsInFlight. */
export class StreamHoldings {
  #held = 0;
  #released = false;

  constructor(
    readonly total: number,
    private readonly add: (bytes: number) => boolean,
  ) {}

  /**
   * Takes `bytes` more, or throws and takes nothing: StreamLimitError when this stream alone would pass the
   * total (no retry can help), StreamsFullError when the others hold the rest.
   */
  take(bytes: number): void {
    if (this.#released || bytes <= 0) return;
    if (this.#held + bytes > this.total) throw new StreamLimitError(`sent a stream that would hold more than all streams may hold together (MAX_STREAM_BYTES_IN_FLIGHT, ${this.total} bytes)`);
    if (!this.add(bytes)) throw new StreamsFullError(this.total);
    this.#held += bytes;
  }

  /** Gives `bytes` back (never more than is held). */
  give(bytes: number): void {
    if (this.#released) return;
    const back = Math.min(bytes, this.#held);
    this.#held -= back;
    this.add(-back);
  }

  /** Gives everything back; later calls do nothing. */
  release(): void {
    if (this.#released) return;
    this.give(this.#held);
    this.#released = true;
  }
}

/**
 * Everything a writer or dialect accumulates over one stream (thinking text, signatures, tool arguments, a
 * Responses answer), charged as it is held and never refunded. Its peak cost (`peakBytesPerChar`: the copies
 * made of it when it is sent on) is bounded per stream by `limit` (MAX_UPSTREAM_BODY_BYTES), so a provider can
 * neither outgrow one event's limit across many events nor grow the heap without end; what it costs while held
 * is charged to the process-wide `holdings` too, when given (the copies are made one stream at a time).
 */
export class StreamBudget {
  #left: number;

  constructor(
    readonly limit: number,
    private readonly holdings?: StreamHoldings,
    private readonly peakBytesPerChar = HELD_PEAK_BYTES_PER_CHAR,
    private readonly what = 'sent a stream whose held text (thinking, signatures, tool input)',
  ) {
    this.#left = limit;
  }

  /** Charges `chars` characters held as one more piece; throws StreamLimitError past the limit (StreamsFullError past the process's). */
  hold(chars: number): void {
    this.#left -= chars * this.peakBytesPerChar + HELD_PIECE_OVERHEAD_BYTES;
    if (this.#left < 0) throw new StreamLimitError(`${this.what} would cost more than ${this.limit} bytes of memory with its copies (MAX_UPSTREAM_BODY_BYTES)`);
    this.holdings?.take(chars * HELD_BYTES_PER_CHAR + HELD_PIECE_OVERHEAD_BYTES);
  }
}
