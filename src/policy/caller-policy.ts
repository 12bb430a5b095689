import type { Response } from 'express';
import type { Logger } from 'pino';
import type { CallerTable, RouteTables } from '../generated/types/route-tables.js';
import type { CallerSpend } from '../observe/metrics.js';
import { pricedUsage, type RequestRecord } from '../observe/request-log.js';
import { gatewayError } from '../wire/gateway-error.js';
import { callerDirectory, keyDigest } from './caller-directory.js';
import { callerSpend } from './caller-spend.js';
import { ClusterLimitStore } from './cluster/worker-store.js';
import { periodsAt, type Admission, type LimitStore, type Reservation } from './limit-store.js';
import { MemoryLimitStore } from './memory-store.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { RedisLimitStore } from './redis-store.js';

export interface CallerPolicyOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Counts shared by every instance using this Redis; absent: counted in the process (or the cluster primary). */
  readonly redisUrl?: string | null;
  /** In a node:cluster worker the primary holds the counts. */
  readonly clusterWorker: boolean;
  readonly logger: Logger;
}

/** The callers of routes.yaml at run time: who a key is, what it may use, and its limits and budget. */
export interface CallerPolicy {
  /** True when routes.yaml declares callers (then every request needs one of their keys). */
  readonly named: boolean;
  /** The caller a presented key belongs to: one digest and one Map lookup. */
  identify(key: string): CallerTable | undefined;
  /** 403 model_not_allowed unless `model` (already on the roster) is one of the caller's. */
  allow(caller: CallerTable, model: string): void;
  /**
   * Admits a request against the caller's limits and budget, holding back `reserve` (reservation.ts) until it
   * settles, and sets OpenAI's rate-limit headers, or throws the 429. Undefined for a caller with neither.
   * The admission's settle() must run once when the answer ends.
   */
  admit(caller: CallerTable, res: Response, reserve: Reservation): Promise<Admission | undefined>;
  /** When the answer ends: its real tokens (prompt + completion) and cost replace its reservation in the caller's buckets and spend. */
  settle(admission: Admission, record: RequestRecord): void;
  /** gateway_limit_store_up: 1 or 0 with REDIS_URL, undefined without. */
  readonly storeUp: (() => number) | undefined;
  /** The budgeted callers' spend and budgets, for gateway_caller_spend_usd and gateway_caller_budget_usd. */
  readonly spend: CallerSpend;
  close(): Promise<void>;
}

export function createCallerPolicy(tables: RouteTables, options: CallerPolicyOptions): CallerPolicy {
  const directory = callerDirectory(tables, options.env);
  for (const warning of directory.warnings) options.logger.warn(warning);
  const callers = Object.values(tables.callers).filter((caller): caller is CallerTable => caller !== undefined);
  const allowed = new Map(callers.map((caller) => [caller, new Set(caller.models)]));
  const limited = new Set(callers.filter(hasLimits));
  const local = new MemoryLimitStore();
  const inProcess: LimitStore = options.clusterWorker ? new ClusterLimitStore(local, options.logger) : local;
  const redis = options.redisUrl && limited.size > 0 ? new RedisLimitStore(options.redisUrl, inProcess, options.logger) : undefined;
  const store = redis ?? inProcess;
  if (!redis && callers.some((caller) => caller.budget !== null)) {
    options.logger.warn('budgets are counted in the process: spend is lost on restart (set REDIS_URL to keep it)');
  }

  return {
    named: callers.length > 0,
    identify: (key) => directory.byDigest.get(keyDigest(key)),
    allow(caller, model) {
      if (allowed.get(caller)?.has(model)) return;
      throw gatewayError('model_not_allowed', `The caller "${caller.name}" may not use the model ${JSON.stringify(model)}; ask the gateway's operators to add it to its models in routes.yaml.`, { param: 'model' });
    },
    async admit(caller, res, reserve) {
      if (!limited.has(caller)) return undefined;
      const admission = await store.admit(caller, periodsAt(Date.now()), {
        // At most the whole limit, for the reason a budget's share is capped below; and so a caller's absurd
        // max_tokens holds its own next requests for at most the minute that refills the bucket.
        tokens: caller.limits.tokensPerMinute === null ? 0 : Math.min(reserve.tokens, caller.limits.tokensPerMinute),
        usd: caller.budget === null ? 0 : Math.min(reserve.usd, largestBudget(caller.budget)),
      });
      const headers = rateLimitHeaders(caller.limits, admission);
      if (admission.refused === null) {
        for (const name in headers) res.setHeader(name, headers[name]!);
        return admission;
      }
      if (admission.refused === 'quota') {
        const budget = [caller.budget?.usdPerMonth != null ? `${caller.budget.usdPerMonth} USD per UTC month` : '', caller.budget?.usdPerDay != null ? `${caller.budget.usdPerDay} USD per UTC day` : ''].filter(Boolean).join(', ');
        throw gatewayError('quota_exceeded', `The caller "${caller.name}" has spent its budget (${budget}); requests are refused until the period turns.`, { headers });
      }
      const seconds = Math.max(1, Math.ceil(admission.retryAfterMs / 1000));
      const what = admission.refused === 'concurrent' ? `${caller.limits.concurrentRequests} requests in flight` : `its ${admission.refused} per minute`;
      throw gatewayError('caller_rate_limited', `The caller "${caller.name}" is over ${what}; retry after ${seconds} s.`, {
        type: admission.refused === 'tokens' ? 'tokens' : 'requests',
        headers: { ...headers, 'retry-after': String(seconds) },
      });
    },
    settle(admission, record) {
      // Read once: the log line and the metrics take the same figures when the response closes.
      const { tokens, costUsd } = pricedUsage(record);
      admission.settle({ tokens: (tokens.counts.prompt ?? 0) + (tokens.counts.completion ?? 0), usd: costUsd ?? 0 });
    },
    storeUp: redis ? () => redis.up : undefined,
    // Counted where admission counts: Redis, else the cluster primary (asked over IPC), else this process.
    spend: callerSpend(store, [...limited], redis ? 'redis' : 'memory', redis !== undefined || options.clusterWorker),
    close: () => store.close(),
  };
}

function hasLimits(caller: CallerTable): boolean {
  const { requestsPerMinute, tokensPerMinute, concurrentRequests } = caller.limits;
  return requestsPerMinute !== null || tokensPerMinute !== null || concurrentRequests !== null || caller.budget !== null;
}

/**
 * The most a reservation holds back of a budget: its whole. One that large already refuses every other request
 * while it is in flight; a larger one (max_tokens 2^53-1 x n 2^53-1: 1e26 USD) would swallow, in the float of
 * the reservations in flight, those of the requests admitted before it, and free them when it settled.
 */
function largestBudget(budget: NonNullable<CallerTable['budget']>): number {
  return Math.max(budget.usdPerMonth ?? 0, budget.usdPerDay ?? 0);
}
