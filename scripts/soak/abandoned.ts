// The soak's abandoned callers: each sends a large body, waits until its provider is stalled at one given
// point of the exchange, and hangs up. Every one must settle in the gateway: nothing tracked, heap back to idle.
import type { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, type CallResult, type CallSpec } from './callers.js';
import { pick, type SoakModel } from './common.js';
import type { FaultKind } from './mock-provider.js';

export interface AbandonPhase {
  readonly name: string;
  readonly stream: boolean;
  /** A mock behaviour that stalls at this point until the gateway lets go. */
  readonly fault: FaultKind;
  /** The caller hangs up once the provider stalls and, besides, it has seen this much of the answer. */
  readonly leaveAfter: CallSpec['leaveAfter'];
}

/** How long after the provider began to stall (and the caller saw what its phase calls for) it hangs up. */
const LEAVE_AFTER_STALL_MS = 100;

/** Every point at which a request can wait on its provider (issue 10, item 1). */
export const ABANDON_PHASES: readonly AbandonPhase[] = [
  { name: 'before upstream headers', stream: false, fault: 'stall_headers', leaveAfter: 'send' },
  { name: 'while reading a non-streamed body', stream: false, fault: 'json_stall_body', leaveAfter: 'send' },
  { name: 'stream before upstream headers', stream: true, fault: 'stall_headers', leaveAfter: 'send' },
  // (No head reaches the caller before the first event: the stream is not committed yet.)
  { name: 'stream before its first event', stream: true, fault: 'sse_stall_first', leaveAfter: 'send' },
  { name: 'stream mid-stream', stream: true, fault: 'sse_stall_mid', leaveAfter: 'first-bytes' },
];

export interface AbandonOptions {
  readonly origin: string;
  readonly agent: Agent;
  readonly models: readonly SoakModel[];
  readonly concurrency: number;
  /** How many callers leave, in all (spread evenly over the phases). */
  readonly count: number;
  readonly bodyBytes: number;
  readonly hardCapMs: number;
  readonly idPrefix: string;
  /** The mock provider has begun to stall on this request. */
  readonly stalled: (requestId: string) => boolean;
  readonly onResult: (result: CallResult, phase: AbandonPhase) => void;
}

/** `count` callers that hang up, `concurrency` at a time, cycling through ABANDON_PHASES. */
export async function runAbandoned(options: AbandonOptions): Promise<void> {
  let next = 0;
  const caller = async () => {
    while (next < options.count) {
      const n = next++;
      const phase = ABANDON_PHASES[n % ABANDON_PHASES.length]!;
      const spec: CallSpec = {
        requestId: `${options.idPrefix}-${n + 1}`,
        model: pick(options.models),
        stream: phase.stream,
        includeUsage: false,
        mode: 'disconnect',
        pauseMs: 0,
        abortAfterMs: LEAVE_AFTER_STALL_MS,
        leaveAfter: phase.leaveAfter,
        fault: phase.fault,
        padBytes: options.bodyBytes,
      };
      // Not on a timer: on a loaded machine the provider may not have the request yet after any fixed delay.
      const giveUpAt = performance.now() + options.hardCapMs;
      const providerStalled = async () => {
        while (!options.stalled(spec.requestId) && performance.now() < giveUpAt) await sleep(5);
      };
      options.onResult(await call(options.origin, options.agent, spec, options.hardCapMs, providerStalled), phase);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, caller));
}
