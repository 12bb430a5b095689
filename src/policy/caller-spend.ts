import type { CallerTable } from '../generated/types/route-tables.js';
import type { CallerSpend, SpendSample } from '../observe/metrics.js';
import { periodsAt, type LimitStore, type PeriodSpend } from './limit-store.js';

/** A reading from Redis or the cluster primary serves scrapes this long: any number of scrapers cost one read per 5 s. */
const FRESH_MS = 5000;
/** The most a scrape waits for a reading; past it (Redis or the primary stalled) the last one is served. */
const READ_BOUND_MS = 1500;

/**
 * The spend gauges' source (docs/callers.md, spend): the budgeted callers' spend in the current UTC day and month as
 * `store` counts it, read at scrape time. Only callers with a budget have their spend counted, so only they appear.
 * `cached`: false for the process's own memory, read directly; true for a read that costs a round trip.
 */
export function callerSpend(store: LimitStore, callers: readonly CallerTable[], storeName: 'redis' | 'memory', cached: boolean): CallerSpend {
  const budgeted = callers.filter((caller) => caller.budget !== null);
  const names = budgeted.map((caller) => caller.name);
  const budgets = budgeted.flatMap((caller): SpendSample[] => [
    ...(caller.budget!.usdPerDay !== null ? [{ caller: caller.name, period: 'day' as const, usd: caller.budget!.usdPerDay }] : []),
    ...(caller.budget!.usdPerMonth !== null ? [{ caller: caller.name, period: 'month' as const, usd: caller.budget!.usdPerMonth }] : []),
  ]);
  let last: { at: number; day: string; samples: SpendSample[] } | undefined;
  let reading: Promise<SpendSample[]> | undefined;

  async function readNow(): Promise<SpendSample[]> {
    const periods = periodsAt(Date.now());
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), READ_BOUND_MS)));
    const spend = await Promise.race([store.spend(names, periods).catch(() => null), bound]);
    clearTimeout(timer);
    if (spend) last = { at: Date.now(), day: periods.day, samples: samplesOf(spend) };
    // Not read: the last reading while it is of today's periods, else nothing rather than yesterday's figures.
    return last?.day === periods.day ? last.samples : [];
  }

  return {
    store: storeName,
    budgets,
    read() {
      if (names.length === 0) return Promise.resolve([]);
      if (cached && last && Date.now() - last.at < FRESH_MS && last.day === periodsAt(Date.now()).day) return Promise.resolve(last.samples);
      reading ??= readNow().finally(() => (reading = undefined));
      return reading;
    },
  };
}

function samplesOf(spend: ReadonlyMap<string, PeriodSpend>): SpendSample[] {
  return [...spend].flatMap(([caller, { dayUsd, monthUsd }]) => [
    { caller, period: 'day' as const, usd: dayUsd },
    { caller, period: 'month' as const, usd: monthUsd },
  ]);
}
