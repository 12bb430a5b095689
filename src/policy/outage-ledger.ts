import type { CallerKeys } from './redis-scripts.js';

/** Spend owed to one caller's period keys, and the in-flight entries to remove from its set. */
export interface OwedToCaller {
  readonly keys: CallerKeys;
  usd: number;
  readonly ids: string[];
}

/**
 * What Redis has to be told once it is back: the spend of the answers that ended while it was down (counted in the
 * process meanwhile) and the in-flight entries of requests whose admit it may still run. One entry per caller and
 * period, the spend summed, so a long outage holds no more than routes.yaml's callers; the ids are those of admits
 * that were on their way when Redis stopped answering, bounded by the requests in flight then.
 */
export class OutageLedger {
  private owed = new Map<string, OwedToCaller>();
  /** Past this many ids the oldest are let go: their entries then leave Redis with their lease. */
  private static readonly MAX_IDS = 10_000;
  private ids = 0;

  private entry(keys: CallerKeys): OwedToCaller {
    const name = `${keys.month}\n${keys.day}\n${keys.inFlight}`;
    let owed = this.owed.get(name);
    if (!owed) this.owed.set(name, (owed = { keys, usd: 0, ids: [] }));
    return owed;
  }

  spend(keys: CallerKeys, usd: number): void {
    if (usd > 0) this.entry(keys).usd += usd;
  }

  remove(keys: CallerKeys, id: string): void {
    if (this.ids >= OutageLedger.MAX_IDS) return;
    this.ids++;
    this.entry(keys).ids.push(id);
  }

  /** Everything owed so far, forgotten here: the caller writes it to Redis. */
  take(): OwedToCaller[] {
    const owed = [...this.owed.values()];
    this.owed = new Map();
    this.ids = 0;
    return owed;
  }
}
