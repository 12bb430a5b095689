import type { Decision, LimitSpec, Periods, Settlement } from './limit-store.js';

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

/** The same decision the Redis script makes (redis-scripts.ts), on counts held in this process. */
export function decide(counts: CallerCounts, spec: LimitSpec, periods: Periods, now: number): Decision {
  const { requestsPerMinute: rpm, tokensPerMinute: tpm, concurrentRequests: concurrent } = spec.limits;
  const requests = rpm === null ? null : levelNow(counts.requests, rpm, now);
  const tokens = tpm === null ? null : levelNow(counts.tokens, tpm, now);
  const refuse = (refused: Decision['refused'], retryAfterMs: number): Decision => ({ refused, retryAfterMs, requestsLevel: requests, tokensLevel: tokens });
  const budget = spec.budget;
  if (budget) {
    if (budget.usdPerMonth !== null && counts.month === periods.month && counts.monthUsd >= budget.usdPerMonth) return refuse('quota', 0);
    if (budget.usdPerDay !== null && counts.day === periods.day && counts.dayUsd >= budget.usdPerDay) return refuse('quota', 0);
  }
  if (concurrent !== null && counts.inFlight >= concurrent) return refuse('concurrent', 1000);
  if (rpm !== null && requests! < 1) return refuse('requests', Math.ceil(((1 - requests!) * 60_000) / rpm));
  // Tokens are taken when the answer ends: admitted while above zero, and the next ones wait while it is below.
  if (tpm !== null && tokens! <= 0) return refuse('tokens', Math.ceil((-tokens! * 60_000) / tpm) + 1);
  const taken = requests === null ? null : requests - 1;
  if (taken !== null) {
    counts.requests.level = taken;
    counts.requests.at = now;
  }
  counts.inFlight++;
  return { refused: null, retryAfterMs: 0, requestsLevel: taken, tokensLevel: tokens };
}

/** When an answer ends: its tokens leave the bucket (below zero if need be), its cost joins the period's spend. */
export function settle(counts: CallerCounts, spec: LimitSpec, periods: Periods, settlement: Settlement, now: number): void {
  counts.inFlight = Math.max(0, counts.inFlight - 1);
  const tpm = spec.limits.tokensPerMinute;
  if (tpm !== null && settlement.tokens > 0) {
    counts.tokens.level = levelNow(counts.tokens, tpm, now) - settlement.tokens;
    counts.tokens.at = now;
  }
  if (spec.budget && settlement.usd > 0) {
    if (counts.month !== periods.month) [counts.month, counts.monthUsd] = [periods.month, 0];
    if (counts.day !== periods.day) [counts.day, counts.dayUsd] = [periods.day, 0];
    counts.monthUsd += settlement.usd;
    counts.dayUsd += settlement.usd;
  }
}
