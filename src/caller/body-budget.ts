/**
 * What a request is charged per JSON value, on top of its bytes. Measured (Node 24): a body held while its
 * provider answers costs 2 (one-byte text) to 4 (two-byte text) bytes of heap per body byte, and each parsed
 * value up to ~64 more (an empty `{}`); 16 per value keeps both near 4 heap bytes per budget byte.
 */
export const BUDGET_BYTES_PER_VALUE = 16;

/**
 * The memory all request bodies in flight may hold together, in bytes. A request's body stays in memory,
 * as text, as parsed JSON and as the body sent upstream, until its answer has started (a stream's commit: no
 * attempt follows, so the body is let go of and its charge given back) or its response closes; counting it here is
 * what keeps any number of concurrent requests within the process's memory. Single-threaded: no locking.
 */
export class BodyBudget {
  readonly total: number;
  #used = 0;

  constructor(total: number) {
    this.total = total;
  }

  get used(): number {
    return this.#used;
  }

  /** Whether `bytes` more would fit now. */
  fits(bytes: number): boolean {
    return this.#used + bytes <= this.total;
  }

  /** A running account for one request; everything it holds goes back at `release()`. */
  open(): BodyReservation {
    return new BodyReservation(this, (bytes) => (this.#used += bytes));
  }
}

export class BodyReservation {
  #held = 0;
  #released = false;
  readonly #budget: BodyBudget;
  readonly #add: (bytes: number) => void;

  constructor(budget: BodyBudget, add: (bytes: number) => void) {
    this.#budget = budget;
    this.#add = add;
  }

  get held(): number {
    return this.#held;
  }

  /** Takes `bytes` more, or nothing and false when the budget cannot give them now. */
  take(bytes: number): boolean {
    if (this.#released || !this.#budget.fits(bytes)) return false;
    this.#held += bytes;
    this.#add(bytes);
    return true;
  }

  /** Gives back all but `bytes` (what is still kept once the body is let go of); the rest goes back at release(). */
  keep(bytes: number): void {
    if (this.#released || bytes >= this.#held) return;
    this.#add(bytes - this.#held);
    this.#held = bytes;
  }

  /** Gives everything back; later calls do nothing. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#add(-this.#held);
    this.#held = 0;
  }
}

