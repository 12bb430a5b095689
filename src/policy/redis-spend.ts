import type { Redis } from 'ioredis';
import type { PeriodSpend, Periods } from './limit-store.js';
import { callerKeys } from './redis-scripts.js';

/**
 * The spend of `callers` in `periods` as Redis holds it: one pipeline of GETs, one round trip whatever the number of
 * callers (not one MGET: each caller's keys live in their own Redis Cluster slot). Rejects when Redis does.
 * Shared by the gateway's gauges and `npm run spend`.
 */
export async function readRedisSpend(redis: Redis, callers: readonly string[], periods: Periods): Promise<Map<string, PeriodSpend>> {
  const pipeline = redis.pipeline();
  for (const caller of callers) {
    const keys = callerKeys(caller, periods.month, periods.day);
    pipeline.get(keys.day).get(keys.month);
  }
  const replies = (await pipeline.exec()) ?? [];
  const usd = (index: number): number => {
    const [error, value] = replies[index] ?? [new Error('no reply'), null];
    if (error) throw error;
    const figure = Number(value ?? 0);
    return Number.isFinite(figure) ? figure : 0;
  };
  return new Map(callers.map((caller, i) => [caller, { dayUsd: usd(2 * i), monthUsd: usd(2 * i + 1) }]));
}
