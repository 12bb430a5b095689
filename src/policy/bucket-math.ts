import type { Decision, LimitSpec, Periods, Reservation, Settlement } from './limit-store.js';

/** A token bucket: its level when last touched. A bucket refills continuously at its per-minute figure / 60 per second. */
export interface Bucket {
  level: number;
  at: number;
}

/** One caller's counts in a process (the memory store, and the cluster primary's). */
export interface CallerCounts {
  readonly requests: Bucket;
  readonly tokens: Bucket;
  inFlight: number;
  /** USD reserved by the requests in flight (counted against the budgets with the spend). */
  reservedUsd: number;
  month: string;
  monthUsd: number;
  day: string;
  dayUsd: number;
}

export function newCounts(spec: LimitSpec, now: number): CallerCounts {
  return {
    requests: { level: spec.limits.requestsPerMinute ?? 0, at: now },
    tokens: { level: spec.limits.tokensPerMinute ?? 0, at: now },
    inFlight: 0,
    reservedUsd: 0,
    month: '',
    monthUsd: 0,
    day: '',
    dayUsd: 0,
  };
}

/** The bucket's level now, refilled since it was last touched, never above its figure. */
export function levelNow(bucket: Bucket, perMinute: number, now: number): number {
  return Math.min(perMinute, bucket.level + (Math.max(0, now - bucket.at) * perMinute) / 60_000);
}

/**
 * The same decision the Redis script makes (redis-scripts.ts), on counts held in this process. Admitted while the
 * spend plus the reservations in flight is under each budget and the tokens bucket is above zero; an admitted request
 * then takes its reservation, so those admitted together pass a limit by at most one reservation.
 */
export function decide(counts: CallerCounts, spec: LimitSpec, periods: Periods, now: number, reserve: Reservation): Decision {
  const { requestsPerMinute: rpm, tokensPerMinute: tpm, concurrentRequests: concurrent } = spec.limits;
  const requests = rpm === null ? null : levelNow(counts.requests, rpm, now);
  const tokens = tpm === null ? null : levelNow(counts.tokens, tpm, now);
  const refuse = (refused: Decision['refused'], retryAfterMs: number): Decision => ({ refused, retryAfterMs, requestsLevel: requests, tokensLevel: tokens });
  const budget = spec.budget;
  if (budget) {
    const month = (counts.month === periods.month ? counts.monthUsd : 0) + counts.reservedUsd;
    const day = (counts.day === periods.day ? counts.dayUsd : 0) + counts.reservedUsd;
    if (budget.usdPerMonth !== null && month >= budget.usdPerMonth) return refuse('quota', 0);
    if (budget.usdPerDay !== null && day >= budget.usdPerDay) return refuse('quota', 0);
  }
  if (concurrent !== null && counts.inFlight >= concurrent) return refuse('concurrent', 1000);
  if (rpm !== null && requests! < 1) return refuse('requests', Math.ceil(((1 - requests!) * 60_000) / rpm));
  // Admitted while above zero; the reservation may take it below, and the next ones wait until it refills.
  if (tpm !== null && tokens! <= 0) return refuse('tokens', Math.ceil((-tokens! * 60_000) / tpm) + 1);
  return take(counts, spec, requests, tokens, now, reserve);
}

/**
 * Counts an admission another process decided (the cluster primary mirroring a worker that admits alone,
 * cluster/worker-store.ts): what decide() takes when it admits, with no refusal.
 */
export function admitDecided(counts: CallerCounts, spec: LimitSpec, now: number, reserve: Reservation): void {
  const { requestsPerMinute: rpm, tokensPerMinute: tpm } = spec.limits;
  take(counts, spec, rpm === null ? null : levelNow(counts.requests, rpm, now), tpm === null ? null : levelNow(counts.tokens, tpm, now), now, reserve);
}

function take(counts: CallerCounts, spec: LimitSpec, requests: number | null, tokens: number | null, now: number, reserve: Reservation): Decision {
  const taken = requests === null ? null : requests - 1;
  if (taken !== null) {
    counts.requests.level = taken;
    counts.requests.at = now;
  }
  const left = tokens === null ? null : tokens - reserve.tokens;
  if (left !== null) {
    counts.tokens.level = left;
    counts.tokens.at = now;
  }
  counts.inFlight++;
  if (spec.budget) counts.reservedUsd += reserve.usd;
  return { refused: null, retryAfterMs: 0, requestsLevel: taken, tokensLevel: left };
}

/**
 * Counts `answers` admissions decided elsewhere and settled since (the cluster primary mirroring the only worker's
 * report, cluster/worker-store.ts), `settlement` their figures summed. An admission and its settle at one instant
 * come to this: the requests bucket loses one each, the tokens bucket loses what was used (the reservation taken and
 * given back), nothing stays in flight, and the cost joins the period's spend.
 */
export function countDone(counts: CallerCounts, spec: LimitSpec, periods: Periods, now: number, answers: number, settlement: Settlement): void {
  const { requestsPerMinute: rpm, tokensPerMinute: tpm } = spec.limits;
  if (rpm !== null) {
    counts.requests.level = levelNow(counts.requests, rpm, now) - answers;
    counts.requests.at = now;
  }
  if (tpm !== null) {
    counts.tokens.level = levelNow(counts.tokens, tpm, now) - settlement.tokens;
    counts.tokens.at = now;
  }
  addSpend(counts, spec, periods, settlement.usd);
}

/**
 * When an answer ends its reservation becomes its real figures: the tokens bucket gets back what was reserved and
 * loses what was used (below zero if need be), and the cost joins the period's spend.
 */
export function settle(counts: CallerCounts, spec: LimitSpec, periods: Periods, settlement: Settlement, now: number, reserve: Reservation): void {
  counts.inFlight = Math.max(0, counts.inFlight - 1);
  const tpm = spec.limits.tokensPerMinute;
  if (tpm !== null && settlement.tokens !== reserve.tokens) {
    counts.tokens.level = Math.min(tpm, levelNow(counts.tokens, tpm, now) + reserve.tokens - settlement.tokens);
    counts.tokens.at = now;
  }
  if (spec.budget) counts.reservedUsd = Math.max(0, counts.reservedUsd - reserve.usd);
  addSpend(counts, spec, periods, settlement.usd);
}

function addSpend(counts: CallerCounts, spec: LimitSpec, periods: Periods, usd: number): void {
  if (!spec.budget || !(usd > 0)) return;
  if (counts.month !== periods.month) [counts.month, counts.monthUsd] = [periods.month, 0];
  if (counts.day !== periods.day) [counts.day, counts.dayUsd] = [periods.day, 0];
  counts.monthUsd += usd;
  counts.dayUsd += usd;
}
