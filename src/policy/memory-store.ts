import { admitDecided, countDone, decide, newCounts, settle, type CallerCounts } from './bucket-math.js';
import { periodsAt, type Admission, type LimitSpec, type LimitStore, type PeriodSpend, type Periods, type Reservation, type Settlement } from './limit-store.js';

/** Every caller's counts, as the cluster primary hands them to a worker that takes over counting (cluster/worker-store.ts). */
export type CountsSnapshot = readonly (readonly [string, CallerCounts])[];

/**
 * Counts held in this process: the whole deployment's with WORKERS=1 and no REDIS_URL, the cluster primary's store,
 * and the fallback while Redis is unreachable. One entry per declared caller, so its size is bounded by routes.yaml.
 */
export class MemoryLimitStore implements LimitStore {
  private readonly counts = new Map<string, CallerCounts>();

  constructor(private readonly clock: () => number = Date.now) {}

  /** Synchronous: the in-process decision is plain arithmetic (admit wraps it for the LimitStore interface). */
  admitNow(spec: LimitSpec, periods: Periods, reserve: Reservation): Admission {
    const now = this.clock();
    const counts = this.countsOf(spec, now);
    const decision = decide(counts, spec, periods, now, reserve);
    if (decision.refused) return { ...decision, settle: () => {} };
    return { ...decision, settle: this.adopt(spec, reserve) };
  }

  /** Counts an admission decided elsewhere (no refusal); its settle() gives it back as admitNow's does. */
  admitDecided(spec: LimitSpec, reserve: Reservation): (settlement: Settlement) => void {
    const now = this.clock();
    admitDecided(this.countsOf(spec, now), spec, now, reserve);
    return this.adopt(spec, reserve);
  }

  /** Counts `answers` admissions decided elsewhere and already settled, `settlement` their figures summed (bucket-math.ts). */
  countDone(spec: LimitSpec, answers: number, settlement: Settlement): void {
    const now = this.clock();
    countDone(this.countsOf(spec, now), spec, periodsAt(now), now, answers, settlement);
  }

  /** The settle() of an admission these counts already hold (admitted here, or in a snapshot): counts nothing now. */
  adopt(spec: LimitSpec, reserve: Reservation): (settlement: Settlement) => void {
    let settled = false;
    return (settlement) => {
      if (settled) return;
      settled = true;
      const now = this.clock();
      // Charged to the period the answer ends in.
      settle(this.countsOf(spec, now), spec, periodsAt(now), settlement, now, reserve);
    };
  }

  /** A copy of every caller's counts. */
  snapshot(): CountsSnapshot {
    return [...this.counts].map(([name, counts]) => [name, copyOf(counts)]);
  }

  /** Starts from another store's counts (a snapshot that crossed IPC: plain numbers and strings). */
  seed(snapshot: CountsSnapshot): void {
    this.counts.clear();
    for (const [name, counts] of snapshot) this.counts.set(name, copyOf(counts));
  }

  private countsOf(spec: LimitSpec, now: number): CallerCounts {
    let counts = this.counts.get(spec.name);
    if (!counts) this.counts.set(spec.name, (counts = newCounts(spec, now)));
    return counts;
  }

  admit(spec: LimitSpec, periods: Periods, reserve: Reservation): Promise<Admission> {
    return Promise.resolve(this.admitNow(spec, periods, reserve));
  }

  spendNow(callers: readonly string[], periods: Periods): Map<string, PeriodSpend> {
    const spend = new Map<string, PeriodSpend>();
    for (const caller of callers) {
      const counts = this.counts.get(caller);
      // A period that has turned since the last settle has spent nothing yet.
      spend.set(caller, { dayUsd: counts?.day === periods.day ? counts.dayUsd : 0, monthUsd: counts?.month === periods.month ? counts.monthUsd : 0 });
    }
    return spend;
  }

  spend(callers: readonly string[], periods: Periods): Promise<ReadonlyMap<string, PeriodSpend>> {
    return Promise.resolve(this.spendNow(callers, periods));
  }

  async close(): Promise<void> {}
}

/** A caller's counts, its two buckets copied too: a snapshot must not move with the store it came from. */
function copyOf(counts: CallerCounts): CallerCounts {
  return { ...counts, requests: { ...counts.requests }, tokens: { ...counts.tokens } };
}
