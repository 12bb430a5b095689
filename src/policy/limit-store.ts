import type { CallerTable } from '../generated/types/route-tables.js';

/** What a store needs to know of a caller: its name (the key of its counts), its limits and its budget. */
export type LimitSpec = Pick<CallerTable, 'name' | 'limits' | 'budget'>;

/** Why a request was refused: a bucket, the requests in flight, or the budget of the period. */
export type Refusal = 'requests' | 'tokens' | 'concurrent' | 'quota';

/** The UTC periods spend is kept for: `2026-11` and `2026-11-26`. */
export interface Periods {
  readonly month: string;
  readonly day: string;
}

/** A decision, with the levels of both buckets after it (null for a bucket the caller does not have). */
export interface Decision {
  readonly refused: Refusal | null;
  /** Until the refusing bucket admits again; 0 when admitted. */
  readonly retryAfterMs: number;
  readonly requestsLevel: number | null;
  readonly tokensLevel: number | null;
}

/** The real tokens (prompt + completion) and cost of an answer, given back when it ends. */
export interface Settlement {
  readonly tokens: number;
  readonly usd: number;
}

/**
 * What admission holds back until the answer ends (docs/callers.md, reservations): an estimate of the answer's
 * tokens and cost. Taken from the tokens bucket and counted against the budgets at admission, replaced by the real
 * figures at the settle, so requests admitted together overshoot a limit by at most one reservation.
 */
export interface Reservation {
  readonly tokens: number;
  readonly usd: number;
}

export interface Admission extends Decision {
  /** Called once when the answer ends (refusals have nothing to give back). */
  settle(settlement: Settlement): void;
}

/** A caller's settled spend in the current periods (reservations in flight are not spend yet). */
export interface PeriodSpend {
  readonly dayUsd: number;
  readonly monthUsd: number;
}

/** Where counts live: this process, the node:cluster primary, or Redis. One decision per request, atomic in the store. */
export interface LimitStore {
  admit(spec: LimitSpec, periods: Periods, reserve: Reservation): Promise<Admission>;
  /** The spend of `callers` in `periods` as this store counts it; null when it cannot say now (Redis down, no primary). */
  spend(callers: readonly string[], periods: Periods): Promise<ReadonlyMap<string, PeriodSpend> | null>;
  close(): Promise<void>;
}

/**
 * A request's in-flight entry in Redis lives this long unless its instance renews it (every third of it while the
 * request is in flight): a process that died, or an admit that ran after its instance gave up on it, frees its slot soon.
 */
export const SLOT_LEASE_MS = 30_000;

let cachedDay = Number.NaN;
let cachedPeriods: Periods = { month: '', day: '' };

/** Per UTC day the same object: formatting a date on every request would cost more than the buckets' arithmetic. */
export function periodsAt(epochMs: number): Periods {
  const day = Math.floor(epochMs / 86_400_000);
  if (day !== cachedDay) {
    const iso = new Date(epochMs).toISOString();
    cachedPeriods = { month: iso.slice(0, 7), day: iso.slice(0, 10) };
    cachedDay = day;
  }
  return cachedPeriods;
}
