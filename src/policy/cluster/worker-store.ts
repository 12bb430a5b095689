import type { Logger } from 'pino';
import {
  ADMIT,
  countedFigure,
  DECIDED,
  HANDED_OVER,
  isMessage,
  REPORT,
  SETTLE,
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
  type SpendMessage,
  type SpentMessage,
  type TakeOverMessage,
} from './protocol.js';
import type { Admission, Decision, LimitSpec, LimitStore, PeriodSpend, Periods, Reservation, Settlement } from '../limit-store.js';
import { MemoryLimitStore } from '../memory-store.js';

/** A worker that hears nothing from its primary this long counts in its own process instead (and says so). */
const PRIMARY_TIMEOUT_MS = 2000;
/** In solo mode the primary hears of admissions and settles this long after them at most (what a crash can lose). */
const REPORT_EVERY_MS = 10;

/** An admission not settled yet, which the primary counts (or will, from the next report). */
interface Open {
  readonly spec: LimitSpec;
  readonly reserve: Reservation;
  /** Its settle() in the solo counts, when they hold it. */
  local: ((settlement: Settlement) => void) | null;
}

/** What the primary needs of a caller: a caller's table also holds its key digests and models, which need not cross IPC. */
const sent = new WeakMap<LimitSpec, LimitSpec>();
function wire(spec: LimitSpec): LimitSpec {
  let small = sent.get(spec);
  if (!small) sent.set(spec, (small = { name: spec.name, limits: spec.limits, budget: spec.budget }));
  return small;
}

/**
 * What the next report carries: the admissions made since the last one and still open (each with its settle as soon
 * as it settles), the settles of admissions reported before, and per caller the answers both admitted and settled
 * since, summed: most answers end within one report's time, and each costs the primary one row a caller then.
 */
interface Report {
  readonly admitted: Map<number, Open>;
  /** SETTLED_ROW numbers each (protocol.ts). */
  readonly settled: number[];
  readonly done: Map<LimitSpec, { answers: number; tokens: number; usd: number }>;
}

/**
 * A node:cluster worker's counts of the callers' limits (no REDIS_URL). The primary holds the deployment's counts, so
 * they survive a reload and hold across workers. With several workers each admission asks the primary (one IPC round
 * trip on the request's path). The only worker (WORKERS=1, no reload under way) takes the counts over from the primary
 * and admits alone, in this process, reporting what it admitted and settled every REPORT_EVERY_MS: the primary keeps
 * the deployment's counts for the next worker and hands the counting back to itself when a reload starts.
 */
export class ClusterLimitStore implements LimitStore {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (decision: Decision | null) => void; timer: NodeJS.Timeout; spec: LimitSpec; reserve: Reservation }>();
  private readonly spendAsked = new Map<number, (spend: ReadonlyMap<string, PeriodSpend> | null) => void>();
  private readonly open = new Map<number, Open>();
  /** Solo mode: the counts this worker admits against. */
  private solo: MemoryLimitStore | null = null;
  /** Between TAKE_OVER and HANDED_OVER: the settles sent meanwhile, which the counts handed over still hold in flight. */
  private takingOver: { spec: LimitSpec; reserve: Reservation; settlement: Settlement }[] | null = null;
  private report: Report | null = null;
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly onMessage = (message: unknown) => {
    if (isMessage<SpentMessage>(message, SPENT)) this.spendAsked.get(message.id)?.(new Map(message.spend));
    else if (isMessage<DecidedMessage>(message, DECIDED)) this.decided(message);
    else if (isMessage(message, SOLO)) this.askToTakeOver();
    else if (isMessage<HandedOverMessage>(message, HANDED_OVER)) this.takeOver(message.counts);
    else if (isMessage(message, SHARED)) this.share();
  };

  /** `local` answers when the primary cannot (no IPC channel, or no answer in time). */
  constructor(
    private readonly local: MemoryLimitStore,
    private readonly logger?: Logger,
  ) {
    process.on('message', this.onMessage);
  }

  admit(spec: LimitSpec, periods: Periods, reserve: Reservation): Promise<Admission> {
    if (this.solo) return Promise.resolve(this.admitAlone(this.solo, spec, periods, reserve));
    const id = this.nextId++;
    const send = process.send?.bind(process);
    if (!send) return this.local.admit(spec, periods, reserve);
    return new Promise<Decision | null>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve(null);
      }, PRIMARY_TIMEOUT_MS);
      this.pending.set(id, { resolve, timer, spec, reserve });
      const message: AdmitMessage = { type: ADMIT, id, spec: wire(spec), periods, reserve };
      send(message, undefined, undefined, (error: Error | null) => {
        if (!error) return;
        clearTimeout(timer);
        this.pending.delete(id);
        resolve(null);
      });
    }).then((decision) => {
      if (decision === null) return this.local.admit(spec, periods, reserve);
      return { ...decision, settle: (settlement: Settlement) => this.settle(id, settlement) };
    });
  }

  /** Solo mode: decided here and now; the primary hears of it in the next report. */
  private admitAlone(solo: MemoryLimitStore, spec: LimitSpec, periods: Periods, reserve: Reservation): Admission {
    const admission = solo.admitNow(spec, periods, reserve);
    if (admission.refused !== null) return admission;
    const id = this.nextId++;
    const entry: Open = { spec, reserve, local: admission.settle };
    this.open.set(id, entry);
    this.queue().admitted.set(id, entry);
    return { ...admission, settle: (settlement) => this.settle(id, settlement) };
  }

  private decided(message: DecidedMessage): void {
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    clearTimeout(waiting.timer);
    if (message.decision.refused === null) {
      // Decided by the primary after it handed the counts over: the solo counts take it now.
      this.open.set(message.id, { spec: waiting.spec, reserve: waiting.reserve, local: this.solo?.admitDecided(waiting.spec, waiting.reserve) ?? null });
    }
    waiting.resolve(message.decision);
  }

  private settle(id: number, settlement: Settlement): void {
    const entry = this.open.get(id);
    if (!entry) return;
    this.open.delete(id);
    entry.local?.(settlement);
    if (this.solo) {
      const report = this.queue();
      if (report.admitted.delete(id)) addDone(report, entry.spec, settlement);
      else report.settled.push(id, settlement.tokens, settlement.usd);
      return;
    }
    this.takingOver?.push({ spec: entry.spec, reserve: entry.reserve, settlement });
    const message: SettleMessage = { type: SETTLE, id, settlement };
    if (process.connected) process.send?.(message, undefined, undefined, () => {});
  }

  private askToTakeOver(): void {
    if (this.solo || this.takingOver || !process.connected) return;
    this.flush();
    this.takingOver = [];
    const message: TakeOverMessage = { type: TAKE_OVER };
    process.send?.(message, undefined, undefined, () => {});
  }

  /**
   * The primary's counts as of TAKE_OVER: they hold every admission it decided before (those whose DECIDED came
   * before this message) and every settle sent before TAKE_OVER; the settles sent since are applied here.
   */
  private takeOver(counts: HandedOverMessage['counts']): void {
    const settledMeanwhile = this.takingOver;
    this.takingOver = null;
    if (!counts || !settledMeanwhile) return;
    const solo = new MemoryLimitStore();
    solo.seed(counts);
    for (const entry of this.open.values()) entry.local = solo.adopt(entry.spec, entry.reserve);
    for (const { spec, reserve, settlement } of settledMeanwhile) solo.adopt(spec, reserve)(settlement);
    this.solo = solo;
    this.logger?.info({ in_flight: this.open.size }, "callers' limits: the only worker admits alone, reporting to the primary");
  }

  /** A reload starts: the primary counts again, from everything reported now. */
  private share(): void {
    this.takingOver = null;
    if (!this.solo) return;
    this.solo = null;
    for (const entry of this.open.values()) entry.local = null;
    this.flush();
    this.logger?.info({ in_flight: this.open.size }, "callers' limits: another worker is starting, the primary counts again");
  }

  private queue(): Report {
    this.flushTimer ??= setTimeout(() => this.flush(), REPORT_EVERY_MS).unref();
    return (this.report ??= { admitted: new Map(), settled: [], done: new Map() });
  }

  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const report = this.report;
    this.report = null;
    if (!report || !process.connected) return;
    const specs: LimitSpec[] = [];
    const indexOf = new Map<LimitSpec, number>();
    const index = (spec: LimitSpec) => {
      let at = indexOf.get(spec);
      if (at === undefined) indexOf.set(spec, (at = specs.push(wire(spec)) - 1));
      return at;
    };
    const admitted: number[] = [];
    for (const [id, { spec, reserve }] of report.admitted) admitted.push(id, index(spec), reserve.tokens, reserve.usd);
    const done: number[] = [];
    for (const [spec, { answers, tokens, usd }] of report.done) done.push(index(spec), answers, tokens, usd);
    const message: ReportMessage = { type: REPORT, specs, admitted, settled: report.settled, done };
    process.send?.(message, undefined, undefined, () => {});
  }

  /** The deployment's counts: the solo ones, else the primary's (any worker scraped says the same). Null when the primary does not answer in time. */
  spend(callers: readonly string[], periods: Periods): Promise<ReadonlyMap<string, PeriodSpend> | null> {
    if (this.solo) return this.solo.spend(callers, periods);
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
    this.flush();
    process.off('message', this.onMessage);
  }
}

function addDone(report: Report, spec: LimitSpec, settlement: Settlement): void {
  let sum = report.done.get(spec);
  if (!sum) report.done.set(spec, (sum = { answers: 0, tokens: 0, usd: 0 }));
  sum.answers++;
  // As the primary takes a settlement on its own: a figure that is not a positive number counts 0, and spoils no sum.
  sum.tokens += countedFigure(settlement.tokens);
  sum.usd += countedFigure(settlement.usd);
}
