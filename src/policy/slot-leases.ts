import { SLOT_LEASE_MS } from './limit-store.js';
import type { CallerKeys } from './redis-scripts.js';

/** Renews the Redis entries of the requests this instance has in flight: one command per caller every third of the lease. */
export class SlotLeases {
  private readonly held = new Map<string, { keys: CallerKeys; ids: Set<string> }>();
  private timer: NodeJS.Timeout | undefined;

  /** `renew` sends one caller's ids (failures are the store's to notice); it is skipped while Redis is down. */
  constructor(private readonly renew: (keys: CallerKeys, ids: string[]) => void) {}

  hold(keys: CallerKeys, id: string): void {
    let entry = this.held.get(keys.inFlight);
    if (!entry) this.held.set(keys.inFlight, (entry = { keys, ids: new Set() }));
    entry.ids.add(id);
    this.timer ??= setInterval(() => this.renewAll(), SLOT_LEASE_MS / 3).unref();
  }

  release(keys: CallerKeys, id: string): void {
    const entry = this.held.get(keys.inFlight);
    if (!entry?.ids.delete(id)) return;
    if (entry.ids.size === 0) this.held.delete(keys.inFlight);
    if (this.held.size === 0) this.stop();
  }

  private renewAll(): void {
    for (const { keys, ids } of this.held.values()) this.renew(keys, [...ids]);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
