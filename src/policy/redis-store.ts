import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { periodsAt, MAX_IN_FLIGHT_MS, type Admission, type Decision, type LimitSpec, type LimitStore, type Periods, type Refusal, type Settlement } from './limit-store.js';
import { ADMIT_SCRIPT, DAY_SPEND_TTL_S, MONTH_SPEND_TTL_S, SETTLE_SCRIPT, callerKeys } from './redis-scripts.js';

/** A Redis that takes longer than this to decide is treated as down for that request (counted in the process instead). */
const COMMAND_TIMEOUT_MS = 1000;

type ScriptedRedis = Redis & {
  gatewayAdmit(...args: (string | number)[]): Promise<[string, string, string, string]>;
  gatewaySettle(...args: (string | number)[]): Promise<number>;
};

/**
 * Counts in Redis, shared by every instance (and worker) that uses the same REDIS_URL. While Redis cannot be reached the
 * gateway keeps serving and counts in `fallback` (this process, or the cluster primary); ioredis reconnects by itself,
 * with backoff. One log line per change of state; `up` feeds gateway_limit_store_up.
 */
export class RedisLimitStore implements LimitStore {
  /** Set once ioredis is loaded: imported only when REDIS_URL is set, so a gateway without it never loads the client. */
  private redis: ScriptedRedis | undefined;
  private closed = false;
  /** Members of the in-flight sets: unique per process and request. */
  private readonly instance = randomBytes(8).toString('hex');
  private nextSlot = 0;
  private state: 'starting' | 'up' | 'down' = 'starting';

  constructor(url: string, private readonly fallback: LimitStore, private readonly logger: Logger) {
    // Until the client is loaded and connected, requests are counted in `fallback`.
    void import('ioredis').then(({ Redis }) => {
      if (!this.closed) this.connect(new Redis(url, this.options()) as ScriptedRedis);
    });
  }

  private options() {
    return {
      // A command while disconnected fails at once (and the request is counted here) rather than waiting in a queue.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: 2000,
      retryStrategy: (times: number) => Math.min(times * 100, 2000),
    };
  }

  private connect(redis: ScriptedRedis): void {
    this.redis = redis;
    redis.defineCommand('gatewayAdmit', { numberOfKeys: 5, lua: ADMIT_SCRIPT });
    redis.defineCommand('gatewaySettle', { numberOfKeys: 4, lua: SETTLE_SCRIPT });
    redis.on('ready', () => this.mark('up'));
    redis.on('error', (error: Error) => this.mark('down', error));
    redis.on('close', () => this.mark('down'));
  }

  /** 1 while Redis answers, 0 while the counts are kept in the process instead. */
  get up(): number {
    return this.state === 'up' ? 1 : 0;
  }

  async admit(spec: LimitSpec, periods: Periods): Promise<Admission> {
    const redis = this.redis;
    if (this.state !== 'up' || !redis) return this.fallback.admit(spec, periods);
    const { limits, budget } = spec;
    const keys = callerKeys(spec.name, periods.month, periods.day);
    const slot = limits.concurrentRequests === null ? '' : `${this.instance}:${this.nextSlot++}`;
    let reply: [string, string, string, string];
    try {
      reply = await redis.gatewayAdmit(
        keys.requests, keys.tokens, keys.inFlight, keys.month, keys.day,
        limits.requestsPerMinute ?? 0, limits.tokensPerMinute ?? 0, limits.concurrentRequests ?? 0,
        budget?.usdPerMonth ?? 0, budget?.usdPerDay ?? 0, slot, MAX_IN_FLIGHT_MS,
      );
    } catch (error) {
      this.mark('down', error as Error);
      return this.fallback.admit(spec, periods);
    }
    const decision: Decision = {
      refused: reply[0] === '' ? null : (reply[0] as Refusal),
      retryAfterMs: Number(reply[1]),
      requestsLevel: limits.requestsPerMinute === null ? null : Number(reply[2]),
      tokensLevel: limits.tokensPerMinute === null ? null : Number(reply[3]),
    };
    if (decision.refused) return { ...decision, settle: () => {} };
    let settled = false;
    return { ...decision, settle: (settlement) => {
      if (settled) return;
      settled = true;
      this.settle(spec, slot, settlement);
    } };
  }

  private settle(spec: LimitSpec, slot: string, settlement: Settlement): void {
    const tpm = spec.limits.tokensPerMinute ?? 0;
    const usd = spec.budget ? settlement.usd : 0;
    if (tpm === 0 && slot === '' && usd <= 0) return;
    // Charged to the period the answer ends in.
    const periods = periodsAt(Date.now());
    const keys = callerKeys(spec.name, periods.month, periods.day);
    // Lost if Redis is gone right now: a slot then frees after MAX_IN_FLIGHT_MS; the log line still has the cost.
    this.redis?.gatewaySettle(keys.tokens, keys.inFlight, keys.month, keys.day, tpm, settlement.tokens, slot, usd.toFixed(10), MONTH_SPEND_TTL_S, DAY_SPEND_TTL_S)
      .catch((error: unknown) => this.mark('down', error as Error));
  }

  private mark(state: 'up' | 'down', error?: Error): void {
    if (state === this.state) return;
    const was = this.state;
    this.state = state;
    if (state === 'up') this.logger.info({ limit_store: 'redis' }, was === 'starting' ? 'limit store: connected to Redis' : 'limit store: Redis reachable again; counting there');
    else this.logger.warn({ limit_store: 'redis', error: error?.message.slice(0, 200) ?? 'connection closed' }, 'limit store: Redis unreachable; counting in the process until it is back');
  }

  async close(): Promise<void> {
    this.closed = true;
    this.state = 'down';
    if (!this.redis) return;
    this.redis.removeAllListeners('close');
    this.redis.on('error', () => {});
    this.redis.disconnect();
  }
}
