import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { periodsAt, SLOT_LEASE_MS, type Admission, type Reservation, type Decision, type LimitSpec, type LimitStore, type PeriodSpend, type Periods, type Refusal, type Settlement } from './limit-store.js';
import { OutageLedger } from './outage-ledger.js';
import { readRedisSpend } from './redis-spend.js';
import { ADMIT_SCRIPT, DAY_SPEND_TTL_S, MONTH_SPEND_TTL_S, RENEW_SCRIPT, SETTLE_SCRIPT, callerKeys, type CallerKeys } from './redis-scripts.js';
import { SlotLeases } from './slot-leases.js';

/** A Redis that takes longer than this to decide is treated as down (counted in the process instead) until a probe answers. */
const COMMAND_TIMEOUT_MS = 1000;
/** While down, Redis is asked a PING this long after the last probe ended: a command that timed out closes no connection. */
const PROBE_INTERVAL_MS = 1000;

type ScriptedRedis = Redis & {
  gatewayAdmit(...args: (string | number)[]): Promise<[string, string, string, string]>;
  gatewaySettle(...args: (string | number)[]): Promise<number>;
  gatewayRenew(...args: (string | number)[]): Promise<number>;
};

/**
 * Counts in Redis, shared by every instance (and worker) that uses the same REDIS_URL. While Redis cannot be reached,
 * or a command takes longer than COMMAND_TIMEOUT_MS, the gateway keeps serving and counts in `fallback` (this process,
 * or the cluster primary), probing Redis every PROBE_INTERVAL_MS; once it answers, the spend counted meanwhile is added
 * there. One log line per change of state; `up` feeds gateway_limit_store_up.
 */
export class RedisLimitStore implements LimitStore {
  /** Set once ioredis is loaded: imported only when REDIS_URL is set, so a gateway without it never loads the client. */
  private redis: ScriptedRedis | undefined;
  private closed = false;
  /** Prefix of the gateway's own request ids in Redis: unique per process, so a caller cannot choose an entry. */
  private readonly instance = randomBytes(8).toString('hex');
  private nextId = 0;
  private state: 'starting' | 'up' | 'down' = 'starting';
  private probe: NodeJS.Timeout | undefined;
  private readonly owed = new OutageLedger();
  private readonly leases = new SlotLeases((keys, ids) => {
    if (this.writable()) this.redis!.gatewayRenew(keys.inFlight, keys.reserved, SLOT_LEASE_MS, ...ids).catch((error: unknown) => this.down(error as Error));
  });

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
    redis.defineCommand('gatewayAdmit', { numberOfKeys: 6, lua: ADMIT_SCRIPT });
    redis.defineCommand('gatewaySettle', { numberOfKeys: 5, lua: SETTLE_SCRIPT });
    redis.defineCommand('gatewayRenew', { numberOfKeys: 2, lua: RENEW_SCRIPT });
    redis.on('ready', () => this.back());
    redis.on('error', (error: Error) => this.down(error));
    redis.on('close', () => this.down());
  }

  /** 1 while Redis answers, 0 while the counts are kept in the process instead. */
  get up(): number {
    return this.state === 'up' ? 1 : 0;
  }

  /** Counting in Redis, and a command can be written to it now. */
  private writable(): boolean {
    return this.state === 'up' && this.redis?.status === 'ready';
  }

  async admit(spec: LimitSpec, periods: Periods, reserve: Reservation): Promise<Admission> {
    if (!this.writable()) return this.meanwhile(spec, periods, reserve, null);
    const redis = this.redis!;
    const { limits, budget } = spec;
    const keys = callerKeys(spec.name, periods.month, periods.day);
    // The gateway's own id, never the caller's x-request-id: two requests never share an entry.
    const id = `${this.instance}:${this.nextId++}`;
    const tracked = limits.concurrentRequests !== null || budget !== null;
    let reply: [string, string, string, string];
    try {
      reply = await redis.gatewayAdmit(
        keys.requests, keys.tokens, keys.inFlight, keys.month, keys.day, keys.reserved,
        limits.requestsPerMinute ?? 0, limits.tokensPerMinute ?? 0, limits.concurrentRequests ?? 0,
        budget?.usdPerMonth ?? 0, budget?.usdPerDay ?? 0, id, SLOT_LEASE_MS, reserve.tokens, reserve.usd.toFixed(10),
      );
    } catch (error) {
      this.down(error as Error);
      // Redis may still run this admit (a slow or paused server runs what it was sent): its entry is removed by id.
      return this.meanwhile(spec, periods, reserve, tracked ? { keys, id } : null);
    }
    const decision: Decision = {
      refused: reply[0] === '' ? null : (reply[0] as Refusal),
      retryAfterMs: Number(reply[1]),
      requestsLevel: limits.requestsPerMinute === null ? null : Number(reply[2]),
      tokensLevel: limits.tokensPerMinute === null ? null : Number(reply[3]),
    };
    if (decision.refused) return { ...decision, settle: () => {} };
    if (tracked) this.leases.hold(keys, id);
    let settled = false;
    return { ...decision, settle: (settlement) => {
      if (settled) return;
      settled = true;
      if (tracked) this.leases.release(keys, id);
      this.settle(spec, tracked ? id : '', reserve, settlement);
    } };
  }

  /** Redis down: decided in `fallback`; the spend is owed to Redis, and so is the removal of an admit it may still run. */
  private async meanwhile(spec: LimitSpec, periods: Periods, reserve: Reservation, sent: { keys: CallerKeys; id: string } | null): Promise<Admission> {
    const admission = await this.fallback.admit(spec, periods, reserve);
    if (admission.refused) {
      if (sent) this.removeEntry(sent.keys, sent.id);
      return admission;
    }
    let settled = false;
    return { ...admission, settle: (settlement) => {
      if (settled) return;
      settled = true;
      admission.settle(settlement);
      const ended = periodsAt(Date.now());
      const keys = callerKeys(spec.name, ended.month, ended.day);
      const usd = spec.budget ? settlement.usd : 0;
      if (sent) this.removeEntry(sent.keys, sent.id);
      if (usd <= 0) return;
      if (this.writable()) this.send(keys, 0, 0, '', usd);
      else this.owed.spend(keys, usd);
    } };
  }

  private removeEntry(keys: CallerKeys, id: string): void {
    if (this.writable()) this.send(keys, 0, 0, id, 0);
    else this.owed.remove(keys, id);
  }

  private settle(spec: LimitSpec, id: string, reserve: Reservation, settlement: Settlement): void {
    const tpm = spec.limits.tokensPerMinute ?? 0;
    const usd = spec.budget ? settlement.usd : 0;
    // Charged to the period the answer ends in.
    const periods = periodsAt(Date.now());
    const keys = callerKeys(spec.name, periods.month, periods.day);
    if (this.writable()) {
      const delta = tpm === 0 ? 0 : settlement.tokens - reserve.tokens;
      if (delta !== 0 || id !== '' || usd > 0) this.send(keys, tpm, delta, id, usd);
      return;
    }
    // Redis down: the spend waits for its return; the tokens bucket is a minute's, so its refund is let go.
    this.owed.spend(keys, usd);
    if (id !== '') this.owed.remove(keys, id);
  }

  /** A command sent counts as done: Redis runs what it was sent in order, a slow or paused one late. */
  private send(keys: CallerKeys, tpm: number, delta: number, id: string, usd: number): void {
    this.redis!.gatewaySettle(keys.tokens, keys.inFlight, keys.month, keys.day, keys.reserved, tpm, delta, id, usd.toFixed(10), MONTH_SPEND_TTL_S, DAY_SPEND_TTL_S)
      .catch((error: unknown) => this.down(error as Error));
  }

  /** What Redis holds, the deployment's spend; null while it is down (its command timeout bounds a slow one). */
  async spend(callers: readonly string[], periods: Periods): Promise<ReadonlyMap<string, PeriodSpend> | null> {
    if (!this.writable()) return null;
    return readRedisSpend(this.redis!, callers, periods).catch(() => null);
  }

  private down(error?: Error): void {
    if (this.closed) return;
    this.mark('down', error);
    this.probeLater();
  }

  private probeLater(): void {
    if (this.probe || this.closed || this.state === 'up') return;
    this.probe = setTimeout(() => {
      const redis = this.redis;
      const answered = redis?.status === 'ready' ? redis.ping().then(() => true, () => false) : Promise.resolve(false);
      void answered.then((ok) => {
        this.probe = undefined;
        if (ok) this.back();
        else this.probeLater();
      });
    }, PROBE_INTERVAL_MS).unref();
  }

  /** Redis answers again: counting there from now on, after the spend and removals it is owed. */
  private back(): void {
    if (this.closed || this.state === 'up' || this.redis?.status !== 'ready') return;
    const owed = this.owed.take();
    this.mark('up', undefined, owed.reduce((sum, entry) => sum + entry.usd, 0));
    for (const { keys, usd, ids } of owed) {
      if (usd > 0) this.send(keys, 0, 0, '', usd);
      for (const id of ids) this.send(keys, 0, 0, id, 0);
    }
  }

  private mark(state: 'up' | 'down', error?: Error, carriedUsd = 0): void {
    if (state === this.state) return;
    const was = this.state;
    this.state = state;
    if (state === 'up' && was === 'starting') this.logger.info({ limit_store: 'redis' }, 'limit store: connected to Redis');
    else if (state === 'up') this.logger.info({ limit_store: 'redis', carried_usd: Math.round(carriedUsd * 1e8) / 1e8 }, 'limit store: Redis reachable again; counting there');
    else this.logger.warn({ limit_store: 'redis', error: error?.message.slice(0, 200) ?? 'connection closed' }, 'limit store: Redis unreachable; counting in the process until it is back');
  }

  async close(): Promise<void> {
    this.closed = true;
    this.state = 'down';
    clearTimeout(this.probe);
    this.leases.stop();
    if (!this.redis) return;
    this.redis.removeAllListeners('close');
    this.redis.on('error', () => {});
    this.redis.disconnect();
  }
}
