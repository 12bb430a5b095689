/** routes.yaml `breaker:` (docs/failover.md), resolved. */
export interface BreakerSettings {
  readonly consecutiveFailures: number;
  readonly cooldownMs: number;
  readonly maxCooldownMs: number;
}

export type BreakerState = 'closed' | 'open' | 'half_open';

/** How an attempt was let through: the breaker was closed, it is the single half-open probe, or everything was ejected. */
export type Admission = 'closed' | 'probe' | 'forced';

/**
 * One endpoint's circuit breaker, fed by every attempt at it. After `consecutiveFailures` failures in a row it
 * ejects the endpoint for `cooldownMs`, doubling on each consecutive ejection up to `maxCooldownMs`. When the
 * cooldown ends, one request probes it (half-open) while the others still avoid it; the probe's success closes
 * it, its failure ejects it again. State is this process's only. `now` is injected so tests control time.
 */
export class EndpointBreaker {
  readonly #settings: BreakerSettings;
  readonly #now: () => number;
  #failures = 0;
  /** Consecutive ejections, for the doubling; 0 once a success closes the breaker. */
  #ejections = 0;
  /** While open: when the cooldown ends. 0 when closed. */
  #openUntil = 0;
  #probing = false;

  constructor(settings: BreakerSettings, now: () => number) {
    this.#settings = settings;
    this.#now = now;
  }

  /** Whether a request may try the endpoint now (closed, or a cooldown that ended with no probe out). No side effect. */
  mayTry(): boolean {
    if (this.#openUntil === 0) return true;
    return !this.#probing && this.#now() >= this.#openUntil;
  }

  /** Takes the endpoint for one attempt that mayTry() allowed; after a cooldown, that attempt is the probe. */
  admit(): Admission {
    if (this.#openUntil === 0) return 'closed';
    this.#probing = true;
    return 'probe';
  }

  /** When the endpoint may be tried again (0 when it may now): the everything-ejected rule picks the earliest. */
  get reopensAt(): number {
    return this.#openUntil;
  }

  get state(): BreakerState {
    if (this.#openUntil === 0) return 'closed';
    return this.#now() < this.#openUntil ? 'open' : 'half_open';
  }

  /** The attempt succeeded: a probe (or a forced attempt) closes the breaker; any success resets the count. */
  succeeded(admission: Admission): void {
    if (this.#openUntil !== 0 && admission === 'closed') return; // an attempt from before the ejection proves little
    if (admission === 'probe') this.#probing = false;
    this.#failures = 0;
    this.#ejections = 0;
    this.#openUntil = 0;
  }

  /**
   * The attempt failed in a way that counts (docs/failover.md). `retryAfterMs`, from a 429's Retry-After,
   * ejects the endpoint until then at once (capped at maxCooldownMs).
   */
  failed(admission: Admission, retryAfterMs?: number): void {
    if (admission === 'probe') {
      this.#probing = false;
      this.#eject(retryAfterMs);
      return;
    }
    if (this.#openUntil !== 0) return; // already ejected: a forced attempt or one from before does not add to it
    if (retryAfterMs !== undefined && retryAfterMs > 0) {
      this.#eject(retryAfterMs);
      return;
    }
    this.#failures++;
    if (this.#failures >= this.#settings.consecutiveFailures) this.#eject();
  }

  /** The attempt ended without saying anything about the endpoint (a 400, the caller left): a probe's turn is given back. */
  released(admission: Admission): void {
    if (admission === 'probe') this.#probing = false;
  }

  #eject(retryAfterMs?: number): void {
    const { cooldownMs, maxCooldownMs } = this.#settings;
    this.#failures = 0;
    let ms: number;
    if (retryAfterMs !== undefined && retryAfterMs > 0) {
      ms = Math.min(retryAfterMs, maxCooldownMs);
    } else {
      ms = Math.min(cooldownMs * 2 ** this.#ejections, maxCooldownMs);
      this.#ejections++;
    }
    this.#openUntil = Math.max(this.#now() + ms, 1);
  }
}

/** Retry-After as milliseconds: `retry-after-ms`, else `retry-after` in seconds or as an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(headers: Readonly<Record<string, string>>, nowEpochMs: number): number | undefined {
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Number(ms);
  const value = headers['retry-after'];
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowEpochMs);
}
