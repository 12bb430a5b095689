import type { RouteTables } from '../../src/generated/types/route-tables.js';
import { periodsAt, type Periods } from '../../src/policy/limit-store.js';
import { readRedisSpend } from '../../src/policy/redis-spend.js';

/** One budgeted caller's spend and budget in the current UTC day and month (null budget: none for that period). */
export interface CallerSpendRow {
  readonly caller: string;
  readonly day: { readonly spentUsd: number; readonly budgetUsd: number | null };
  readonly month: { readonly spentUsd: number; readonly budgetUsd: number | null };
}

export interface SpendReport {
  /** Where the figures were read: Redis (REDIS_URL), or a running gateway's /metrics (and which store that one counts in). */
  readonly source: 'redis' | 'gateway';
  readonly store: 'redis' | 'memory' | null;
  readonly periods: Periods;
  readonly callers: readonly CallerSpendRow[];
  /** Callers of routes.yaml with no budget: their spend is not counted by the store (only in gateway_cost_usd_total). */
  readonly unbudgeted: readonly string[];
}

export class SpendError extends Error {}

const REDIS_TIMEOUT_MS = 5000;

/** From Redis, for the callers and budgets of the compiled routes.yaml: the same keys the gateway counts in. */
export async function spendFromRedis(url: string, tables: RouteTables): Promise<SpendReport> {
  const callers = Object.values(tables.callers).filter((caller) => caller !== undefined);
  const budgeted = callers.filter((caller) => caller.budget !== null).sort((a, b) => a.name.localeCompare(b.name));
  const periods = periodsAt(Date.now());
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: REDIS_TIMEOUT_MS, commandTimeout: REDIS_TIMEOUT_MS, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    const spend = await readRedisSpend(redis, budgeted.map((caller) => caller.name), periods);
    return {
      source: 'redis',
      store: 'redis',
      periods,
      callers: budgeted.map((caller) => ({
        caller: caller.name,
        day: { spentUsd: spend.get(caller.name)?.dayUsd ?? 0, budgetUsd: caller.budget!.usdPerDay },
        month: { spentUsd: spend.get(caller.name)?.monthUsd ?? 0, budgetUsd: caller.budget!.usdPerMonth },
      })),
      unbudgeted: callers.filter((caller) => caller.budget === null).map((caller) => caller.name),
    };
  } catch (error) {
    // The URL may hold a password: only its host and port are named.
    throw new SpendError(`cannot read Redis at ${redisHost(url)}: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    redis.disconnect();
  }
}

/**
 * From a running gateway's /metrics (gateway_caller_spend_usd and gateway_caller_budget_usd): the only way to the
 * spend a gateway without REDIS_URL counts in its own memory. Any worker of a cluster answers the same figures.
 */
export async function spendFromGateway(origin: string): Promise<SpendReport> {
  let text: string;
  try {
    const response = await fetch(new URL('/metrics', origin), { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    text = await response.text();
  } catch (error) {
    throw new SpendError(`cannot read ${new URL('/metrics', origin).href}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const rows = new Map<string, { day: { spentUsd: number; budgetUsd: number | null }; month: { spentUsd: number; budgetUsd: number | null } }>();
  const row = (caller: string) => {
    let found = rows.get(caller);
    if (!found) rows.set(caller, (found = { day: { spentUsd: 0, budgetUsd: null }, month: { spentUsd: 0, budgetUsd: null } }));
    return found;
  };
  let store: 'redis' | 'memory' | null = null;
  let seen = false;
  for (const { name, labels, value } of gaugeLines(text)) {
    const period = labels.get('period');
    const caller = labels.get('caller');
    if ((period !== 'day' && period !== 'month') || caller === undefined) continue;
    if (name === 'gateway_caller_spend_usd') {
      row(caller)[period].spentUsd = value;
      const labelled = labels.get('store');
      if (labelled === 'redis' || labelled === 'memory') store = labelled;
    } else if (name === 'gateway_caller_budget_usd') row(caller)[period].budgetUsd = value;
    seen = true;
  }
  if (!seen && !text.includes('gateway_caller_budget_usd')) throw new SpendError(`${origin} has no gateway_caller_budget_usd: not a gateway, or one without the spend gauges`);
  const callers = [...rows].map(([caller, figures]) => ({ caller, ...figures })).sort((a, b) => a.caller.localeCompare(b.caller));
  return { source: 'gateway', store, periods: periodsAt(Date.now()), callers, unbudgeted: [] };
}

/** The samples of the two spend gauges in a Prometheus text exposition; other lines are skipped. */
function* gaugeLines(text: string): Generator<{ name: string; labels: Map<string, string>; value: number }> {
  for (const line of text.split('\n')) {
    const match = /^(gateway_caller_(?:spend|budget)_usd)\{(.*)\} (\S+)$/.exec(line);
    if (!match) continue;
    const labels = new Map<string, string>();
    for (const pair of match[2]!.matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) labels.set(pair[1]!, pair[2]!.replace(/\\(.)/g, (_all, char: string) => (char === 'n' ? '\n' : char)));
    const value = Number(match[3]);
    if (Number.isFinite(value)) yield { name: match[1]!, labels, value };
  }
}

function redisHost(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '6379'}`;
  } catch {
    return '(REDIS_URL, not a URL)';
  }
}
