import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long forced requests get to write their final answer once the grace period is over. */
const FINAL_WORDS_MS = 2000;

/** A request a drain past its grace period stops (it answers shutting_down, or stops its provider call). */
export interface ForcedStop {
  forceStop(): void;
}

/**
 * In-flight requests and the drain on shutdown: while draining, health says so and responses close
 * their connections; requests still running when the grace period ends are told to stop, and each
 * answers `shutting_down` (a final event for a stream).
 */
export class Lifecycle {
  #draining = false;
  #forced = false;
  #inFlight = 0;
  /** Handlers still settling after their response closed (hold()): the drain waits for them too. */
  #held = 0;
  #whenIdle: (() => void)[] = [];
  readonly #forceHooks = new Set<ForcedStop>();
  /** One listener for every tracked response (a listener is called with the response as `this`): no closure per request. */
  readonly #untrack = () => {
    this.#inFlight--;
    this.#wakeIfIdle();
  };

  #wakeIfIdle(): void {
    if (this.#inFlight === 0 && this.#held === 0) for (const resolve of this.#whenIdle.splice(0)) resolve();
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** True once the grace period is over and in-flight requests are being stopped. */
  get forced(): boolean {
    return this.#forced;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Forced-stop hooks held: one per request still reading its body or waiting on its provider. 0 when idle and nothing leaks. */
  get stopHooks(): number {
    return this.#forceHooks.size;
  }

  track(res: ServerResponse): void {
    this.#inFlight++;
    // 'close' comes once per response, so a plain listener does what once() would without its wrapper.
    res.on('close', this.#untrack);
  }

  /**
   * Keeps the drain waiting for a handler until its release(), even once its response closed: a stream reads the
   * provider's usage for a bounded while after the caller left (relay-stream.ts), and its charge and log line must
   * be out before the process exits. A forced stop ends that reading at once. Called once each, in pairs.
   */
  hold(): void {
    this.#held++;
  }

  release(): void {
    this.#held--;
    this.#wakeIfIdle();
  }

  /** Registers what stops one request when the grace period ends, until offForcedStop. */
  onForcedStop(request: ForcedStop): void {
    this.#forceHooks.add(request);
  }

  offForcedStop(request: ForcedStop): void {
    this.#forceHooks.delete(request);
  }

  /** Lets in-flight requests finish for up to `graceMs`, then stops the rest. Resolves when none is left (or gave up). */
  async drain(graceMs: number): Promise<{ forcedStops: number }> {
    this.#draining = true;
    if (await this.#idleWithin(graceMs)) return { forcedStops: 0 };
    this.#forced = true;
    const forcedStops = this.#forceHooks.size;
    // Each is told once and let go: one still sending its body is answered now but settles only when its socket
    // closes (after the lingering close), and nothing here needs it until then.
    for (const request of [...this.#forceHooks]) {
      this.#forceHooks.delete(request);
      request.forceStop();
    }
    await this.#idleWithin(FINAL_WORDS_MS);
    return { forcedStops };
  }

  async #idleWithin(ms: number): Promise<boolean> {
    if (this.#inFlight === 0 && this.#held === 0) return true;
    const idle = new Promise<true>((resolve) => this.#whenIdle.push(() => resolve(true)));
    const timer = new AbortController();
    const result = await Promise.race([idle, sleep(ms, false, { signal: timer.signal }).catch(() => false as const)]);
    timer.abort();
    return result;
  }
}
