import cluster, { type Worker } from 'node:cluster';
import {
  ADMIT,
  ADMITTED_ROW,
  countedFigure,
  DECIDED,
  DONE_ROW,
  HANDED_OVER,
  isMessage,
  REPORT,
  SETTLE,
  SETTLED_ROW,
  SHARED,
  SOLO,
  SPEND,
  SPENT,
  TAKE_OVER,
  type AdmitMessage,
  type DecidedMessage,
  type HandedOverMessage,
  type ReportMessage,
  type SettleMessage,
  type SharedMessage,
  type SoloMessage,
  type SpendMessage,
  type SpentMessage,
} from './protocol.js';
import type { Settlement } from '../limit-store.js';
import { MemoryLimitStore } from '../memory-store.js';

/** What the cluster primary decides about who counts (cluster-primary.ts knows which workers serve). */
export interface ClusterLimits {
  /** `worker` is the only one: it may count alone (it asks; the primary keeps a mirror from its reports). */
  offerSolo(worker: Worker): void;
  /** Another worker is coming: the one counting alone, if any, hands the counting back. */
  endSolo(): void;
}

/**
 * In the primary: the deployment's counts. It decides for every worker in shared mode, and mirrors the solo worker's
 * reports; a worker that exits gives back its requests in flight.
 */
export function serveClusterLimits(): ClusterLimits {
  const store = new MemoryLimitStore();
  const held = new Map<Worker, Map<number, (settlement: Settlement) => void>>();
  let solo: Worker | null = null;
  const heldBy = (worker: Worker) => {
    let mine = held.get(worker);
    if (!mine) held.set(worker, (mine = new Map()));
    return mine;
  };
  const settleHeld = (worker: Worker, id: unknown, settlement: Settlement | undefined) => {
    const mine = held.get(worker);
    const settle = typeof id === 'number' ? mine?.get(id) : undefined;
    if (!settle) return;
    mine!.delete(id as number);
    settle(sane(settlement));
  };
  const send = (worker: Worker, message: object) => {
    if (worker.isConnected()) worker.send(message, undefined, () => {});
  };

  cluster.on('message', (worker: Worker, message: unknown) => {
    if (isMessage<AdmitMessage>(message, ADMIT) && typeof message.id === 'number') {
      const admission = store.admitNow(message.spec, message.periods, sane(message.reserve));
      if (admission.refused === null) heldBy(worker).set(message.id, admission.settle);
      const { refused, retryAfterMs, requestsLevel, tokensLevel } = admission;
      send(worker, { type: DECIDED, id: message.id, decision: { refused, retryAfterMs, requestsLevel, tokensLevel } } satisfies DecidedMessage);
    } else if (isMessage<SpendMessage>(message, SPEND) && typeof message.id === 'number') {
      const callers = Array.isArray(message.callers) ? message.callers.filter((caller) => typeof caller === 'string') : [];
      send(worker, { type: SPENT, id: message.id, spend: [...store.spendNow(callers, message.periods)] } satisfies SpentMessage);
    } else if (isMessage<SettleMessage>(message, SETTLE)) {
      settleHeld(worker, message.id, message.settlement);
    } else if (isMessage<ReportMessage>(message, REPORT)) {
      // Admitted by the worker already: counted as it counted them, never refused here.
      const specs = Array.isArray(message.specs) ? message.specs : [];
      const admitted = numbers(message.admitted);
      for (let at = 0; at + ADMITTED_ROW <= admitted.length; at += ADMITTED_ROW) {
        const spec = specs[admitted[at + 1]!];
        if (spec) heldBy(worker).set(admitted[at]!, store.admitDecided(spec, sane({ tokens: admitted[at + 2], usd: admitted[at + 3] })));
      }
      const settled = numbers(message.settled);
      for (let at = 0; at + SETTLED_ROW <= settled.length; at += SETTLED_ROW) settleHeld(worker, settled[at], { tokens: settled[at + 1]!, usd: settled[at + 2]! });
      const done = numbers(message.done);
      for (let at = 0; at + DONE_ROW <= done.length; at += DONE_ROW) {
        const spec = specs[done[at]!];
        const answers = done[at + 1]!;
        if (spec && Number.isSafeInteger(answers) && answers > 0) store.countDone(spec, answers, sane({ tokens: done[at + 2], usd: done[at + 3] }));
      }
    } else if (isMessage(message, TAKE_OVER)) {
      // Everything the worker sent before this is counted: these counts are where it starts.
      send(worker, { type: HANDED_OVER, counts: solo === worker ? store.snapshot() : null } satisfies HandedOverMessage);
    }
  });
  cluster.on('exit', (worker) => {
    for (const settle of held.get(worker)?.values() ?? []) settle({ tokens: 0, usd: 0 });
    held.delete(worker);
    if (solo === worker) solo = null;
  });

  return {
    offerSolo(worker) {
      if (solo === worker) return;
      solo = worker;
      send(worker, { type: SOLO } satisfies SoloMessage);
    },
    endSolo() {
      if (!solo) return;
      send(solo, { type: SHARED } satisfies SharedMessage);
      solo = null;
    },
  };
}

/** A report's list of numbers; anything else in it is read as NaN, which its row's checks refuse or sane() zeroes. */
function numbers(list: unknown): readonly number[] {
  return Array.isArray(list) ? list.map((value) => (typeof value === 'number' ? value : NaN)) : [];
}

/** Figures from a worker are ours, but a NaN would poison a bucket for good. */
function sane(figures: { tokens?: unknown; usd?: unknown } | undefined): Settlement {
  return { tokens: countedFigure(figures?.tokens), usd: countedFigure(figures?.usd) };
}
