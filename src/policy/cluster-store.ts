import cluster, { type Worker } from 'node:cluster';
import type { Admission, Decision, LimitSpec, LimitStore, PeriodSpend, Periods, Reservation, Settlement } from './limit-store.js';
import { MemoryLimitStore } from './memory-store.js';

/**
 * WORKERS > 1: the node:cluster primary holds the counts (one MemoryLimitStore) and every worker asks it, one IPC
 * round trip per request, so the limits hold across workers exactly as in one process.
 */
const ADMIT = 'chat-routing-gateway:limits-admit';
const DECIDED = 'chat-routing-gateway:limits-decided';
const SETTLE = 'chat-routing-gateway:limits-settle';
const SPEND = 'chat-routing-gateway:limits-spend';
const SPENT = 'chat-routing-gateway:limits-spent';

/** A worker that hears nothing from its primary this long counts in its own process instead (and says so). */
const PRIMARY_TIMEOUT_MS = 2000;

interface AdmitMessage {
  readonly type: typeof ADMIT;
  readonly id: number;
  readonly spec: LimitSpec;
  readonly periods: Periods;
  readonly reserve: Reservation;
}

interface DecidedMessage {
  readonly type: typeof DECIDED;
  readonly id: number;
  readonly decision: Decision;
}

interface SettleMessage {
  readonly type: typeof SETTLE;
  readonly id: number;
  readonly settlement: Settlement;
}

interface SpendMessage {
  readonly type: typeof SPEND;
  readonly id: number;
  readonly callers: readonly string[];
  readonly periods: Periods;
}

interface SpentMessage {
  readonly type: typeof SPENT;
  readonly id: number;
  readonly spend: readonly (readonly [string, PeriodSpend])[];
}

/** In a worker: asks the primary. */
export class ClusterLimitStore implements LimitStore {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (decision: Decision) => void; timer: NodeJS.Timeout }>();
  private readonly spendAsked = new Map<number, (spend: ReadonlyMap<string, PeriodSpend> | null) => void>();
  private readonly onMessage = (message: unknown) => {
    if (isMessage<SpentMessage>(message, SPENT)) {
      this.spendAsked.get(message.id)?.(new Map(message.spend));
      return;
    }
    if (!isMessage<DecidedMessage>(message, DECIDED)) return;
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    clearTimeout(waiting.timer);
    waiting.resolve(message.decision);
  };

  /** `local` answers when the primary cannot (no IPC channel, or no answer in time). */
  constructor(private readonly local: MemoryLimitStore) {
    process.on('message', this.onMessage);
  }

  admit(spec: LimitSpec, periods: Periods, reserve: Reservation): Promise<Admission> {
    const id = this.nextId++;
    const send = process.send?.bind(process);
    if (!send) return this.local.admit(spec, periods, reserve);
    return new Promise<Decision | null>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve(null);
      }, PRIMARY_TIMEOUT_MS);
      this.pending.set(id, { resolve, timer });
      const message: AdmitMessage = { type: ADMIT, id, spec, periods, reserve };
      send(message, undefined, undefined, (error: Error | null) => {
        if (!error) return;
        clearTimeout(timer);
        this.pending.delete(id);
        resolve(null);
      });
    }).then((decision) => {
      if (decision === null) return this.local.admit(spec, periods, reserve);
      let settled = decision.refused !== null;
      return {
        ...decision,
        settle: (settlement: Settlement) => {
          if (settled) return;
          settled = true;
          const message: SettleMessage = { type: SETTLE, id, settlement };
          if (process.connected) process.send?.(message, undefined, undefined, () => {});
        },
      };
    });
  }

  /** The primary's counts, the deployment's: any worker scraped says the same. Null when the primary does not answer in time. */
  spend(callers: readonly string[], periods: Periods): Promise<ReadonlyMap<string, PeriodSpend> | null> {
    const send = process.send?.bind(process);
    if (!send) return this.local.spend(callers, periods);
    const id = this.nextId++;
    return new Promise((resolve) => {
      const done = (spend: ReadonlyMap<string, PeriodSpend> | null) => {
        clearTimeout(timer);
        this.spendAsked.delete(id);
        resolve(spend);
      };
      const timer = setTimeout(() => done(null), PRIMARY_TIMEOUT_MS);
      this.spendAsked.set(id, done);
      const message: SpendMessage = { type: SPEND, id, callers, periods };
      send(message, undefined, undefined, (error: Error | null) => {
        if (error) done(null);
      });
    });
  }

  async close(): Promise<void> {
    process.off('message', this.onMessage);
  }
}

/** In the primary: decides for every worker; a worker that exits gives back its requests in flight. */
export function serveClusterLimits(): void {
  const store = new MemoryLimitStore();
  const held = new Map<Worker, Map<number, Admission>>();
  cluster.on('message', (worker: Worker, message: unknown) => {
    if (isMessage<AdmitMessage>(message, ADMIT)) {
      const admission = store.admitNow(message.spec, message.periods, sane(message.reserve));
      if (admission.refused === null) {
        let mine = held.get(worker);
        if (!mine) held.set(worker, (mine = new Map()));
        mine.set(message.id, admission);
      }
      const { refused, retryAfterMs, requestsLevel, tokensLevel } = admission;
      const reply: DecidedMessage = { type: DECIDED, id: message.id, decision: { refused, retryAfterMs, requestsLevel, tokensLevel } };
      if (worker.isConnected()) worker.send(reply, undefined, () => {});
    } else if (isMessage<SpendMessage>(message, SPEND)) {
      const callers = Array.isArray(message.callers) ? message.callers.filter((caller) => typeof caller === 'string') : [];
      const reply: SpentMessage = { type: SPENT, id: message.id, spend: [...store.spendNow(callers, message.periods)] };
      if (worker.isConnected()) worker.send(reply, undefined, () => {});
    } else if (isMessage<SettleMessage>(message, SETTLE)) {
      const mine = held.get(worker);
      const admission = mine?.get(message.id);
      if (!admission) return;
      mine!.delete(message.id);
      admission.settle(sane(message.settlement));
    }
  });
  cluster.on('exit', (worker) => {
    for (const admission of held.get(worker)?.values() ?? []) admission.settle({ tokens: 0, usd: 0 });
    held.delete(worker);
  });
}

/** Figures from a worker are ours, but a NaN would poison a bucket for good. */
function sane(figures: Settlement | Reservation | undefined): Settlement {
  const finite = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);
  return { tokens: finite(figures?.tokens), usd: finite(figures?.usd) };
}

function isMessage<T extends { type: string; id: number }>(message: unknown, type: T['type']): message is T {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type && typeof (message as { id?: unknown }).id === 'number';
}
