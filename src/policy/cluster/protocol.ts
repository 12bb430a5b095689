import type { Decision, LimitSpec, PeriodSpend, Periods, Reservation, Settlement } from '../limit-store.js';
import type { CountsSnapshot } from '../memory-store.js';

/**
 * The callers' limits between a node:cluster worker and its primary (worker-store.ts, primary-store.ts).
 * Shared mode (WORKERS > 1, or a reload under way): ADMIT and its DECIDED are one round trip per request, SETTLE when
 * it ends. Solo mode (the only worker): the primary offers SOLO, the worker asks TAKE_OVER, the primary answers
 * HANDED_OVER with its counts; the worker then admits alone and sends REPORT (its admissions and settles, batched)
 * off the request path, until SHARED (a reload starts) sends it back to shared mode.
 */
export const ADMIT = 'chat-routing-gateway:limits-admit';
export const DECIDED = 'chat-routing-gateway:limits-decided';
export const SETTLE = 'chat-routing-gateway:limits-settle';
export const SPEND = 'chat-routing-gateway:limits-spend';
export const SPENT = 'chat-routing-gateway:limits-spent';
export const SOLO = 'chat-routing-gateway:limits-solo';
export const TAKE_OVER = 'chat-routing-gateway:limits-take-over';
export const HANDED_OVER = 'chat-routing-gateway:limits-handed-over';
export const REPORT = 'chat-routing-gateway:limits-report';
export const SHARED = 'chat-routing-gateway:limits-shared';

export interface AdmitMessage {
  readonly type: typeof ADMIT;
  readonly id: number;
  readonly spec: LimitSpec;
  readonly periods: Periods;
  readonly reserve: Reservation;
}

export interface DecidedMessage {
  readonly type: typeof DECIDED;
  readonly id: number;
  readonly decision: Decision;
}

export interface SettleMessage {
  readonly type: typeof SETTLE;
  readonly id: number;
  readonly settlement: Settlement;
}

export interface SpendMessage {
  readonly type: typeof SPEND;
  readonly id: number;
  readonly callers: readonly string[];
  readonly periods: Periods;
}

export interface SpentMessage {
  readonly type: typeof SPENT;
  readonly id: number;
  readonly spend: readonly (readonly [string, PeriodSpend])[];
}

/** Primary → worker: you are the only worker; take the counts over if you will. */
export interface SoloMessage {
  readonly type: typeof SOLO;
}

/** Worker → primary: everything I sent before this is what the counts you hand me must hold. */
export interface TakeOverMessage {
  readonly type: typeof TAKE_OVER;
}

/** Primary → worker: the counts as of TAKE_OVER, or null when the worker is no longer the only one. */
export interface HandedOverMessage {
  readonly type: typeof HANDED_OVER;
  readonly counts: CountsSnapshot | null;
}

/**
 * Worker → primary, in solo mode: what it admitted and settled since the last report, as flat lists of numbers
 * (one report every 10 ms carries dozens of rows under load, and the primary parses numbers far faster than objects).
 * An admission settled before the report that would have carried it is not sent on its own: `done` sums such
 * answers per caller, since counting one admission and its settle at the same instant comes to the settlement alone
 * (bucket-math.ts, countDone).
 */
export interface ReportMessage {
  readonly type: typeof REPORT;
  /** The callers the rows name, by their index in this list. */
  readonly specs: readonly LimitSpec[];
  /** Admissions still open, ADMITTED_ROW numbers each: id, caller index, reserved tokens, reserved USD. */
  readonly admitted: readonly number[];
  /** Settles of admissions reported before, SETTLED_ROW numbers each: id, tokens, USD. */
  readonly settled: readonly number[];
  /** Answers admitted and settled since the last report, DONE_ROW numbers per caller: caller index, answers, tokens, USD. */
  readonly done: readonly number[];
}

export const ADMITTED_ROW = 4;
export const SETTLED_ROW = 3;
export const DONE_ROW = 4;

/** Primary → worker: another worker is coming (a reload): report what you hold and ask me again. */
export interface SharedMessage {
  readonly type: typeof SHARED;
}

/** A figure from the other side as it is counted: a positive finite number, else 0 (a NaN would poison a bucket for good). */
export function countedFigure(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

export function isMessage<T extends { type: string }>(message: unknown, type: T['type']): message is T {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;
}
