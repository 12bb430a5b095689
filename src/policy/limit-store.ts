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

/** What an admitted request gives back when its answer ends: its tokens, its cost and its place in flight. */
export interface Settlement {
  readonly tokens: number;
  readonly usd: number;
}

export interface Admission extends Decision {
  /** Called once when the answer ends (refusals have nothing to give back). */
  settle(settlement: Settlement): void;
}

/** Where counts live: this process, the node:cluster primary, or Redis. One decision per request, atomic in the store. */
export interface LimitStore {
  admit(spec: LimitSpec, periods: Periods): Promise<Admission>;
  close(): Promise<void>;
}

/** A request may stay counted in flight this long at most: a process that died cannot hold a slot for ever. */
export const MAX_IN_FLIGHT_MS = 30 * 60_000;

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
