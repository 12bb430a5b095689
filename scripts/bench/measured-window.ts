// One measured window of `npm run bench`: one target, one scenario, autocannon at a fixed concurrency after a
// short warm-up; every answer checked. A window during which something outside the bench took more than
// BENCH_MAX_OTHER_CPU of a core is made again (up to BENCH_RETRIES times) and the quietest attempt is kept.
import type { LoadResult } from './bench-protocol.js';
import { fixed, int, ms } from './format.js';
import type { LoadGenerator } from './load-client.js';
import { expectedModel, type Scenario } from './scenarios.js';
import { CONNECTIONS, MAX_OTHER_CPU, RETRIES, SECONDS, WARMUP_SECONDS } from './settings.js';
import type { Target } from './targets.js';

/** What the run shares between its windows: who to ask, which pids are the bench's, and how disturbed it was. */
export interface RunContext {
  readonly loader: LoadGenerator;
  readonly benchPids: readonly number[];
  /** The most CPU (share of a core) used outside the bench during a kept window. */
  foreignMax: number;
  /** The most CPU the load side (load generator, mock provider, orchestrator) used during a kept window. */
  loadSideMax: number;
  /** Windows made again because others used the machine. */
  repeated: number;
  /** Answers the gateway served (warm-ups included), to check against its log and metrics. */
  gatewayAnswers: number;
}

export const busyOf = (ticks: number, ticksPerSecond: number, elapsedMs: number) => ticks / ticksPerSecond / (elapsedMs / 1000);
export const cpuPerRequestOf = (load: LoadResult) => ((load.targetCpuTicks / load.ticksPerSecond) * 1e6) / load.requests;

/** Throws when any answer of the window failed (error, timeout, non-2xx, failed check) or none came. */
export function assertClean(load: LoadResult, what: string, seconds: number): void {
  const p = load.problems;
  if (p.errors + p.timeouts + p.non2xx + p.mismatches > 0) {
    throw new Error(`${what}: ${p.errors} errors, ${p.timeouts} timeouts, ${p.non2xx} non-2xx, ${p.mismatches} failed checks${p.sample ? `; first failed answer: ${p.sample}` : ''}`);
  }
  if (load.requests === 0) throw new Error(`${what}: no answer in ${seconds} s`);
}

/** Plain autocannon load on one target, `seconds` measured after `warmupSeconds`; every answer checked. */
export async function loadOnce(context: RunContext, target: Target, scenario: Scenario, warmupSeconds: number, seconds: number, keepLatencies: boolean): Promise<LoadResult> {
  const load = await context.loader.send(
    { type: 'load', url: target.url, bodies: [scenario.body], connections: CONNECTIONS, warmupSeconds, seconds, targetPid: target.pid, benchPids: context.benchPids, expect: { model: expectedModel(scenario, target.name) }, keepLatencies },
    (warmupSeconds + seconds + 60) * 1000,
  );
  assertClean(load, `${target.name}, ${scenario.label}`, seconds);
  if (target.name === 'gateway') context.gatewayAnswers += load.warmupRequests + load.requests;
  return load;
}

export async function measuredWindow(context: RunContext, target: Target, scenario: Scenario, tag: string): Promise<LoadResult> {
  let kept: LoadResult | undefined;
  let foreign = Number.POSITIVE_INFINITY;
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    const load = await loadOnce(context, target, scenario, attempt === 0 ? WARMUP_SECONDS : 1, SECONDS, true);
    const attemptForeign = busyOf(load.foreignCpuTicks, load.ticksPerSecond, load.elapsedMs);
    if (attemptForeign < foreign) [kept, foreign] = [load, attemptForeign];
    if (attemptForeign <= MAX_OTHER_CPU) break;
    if (attempt < RETRIES) {
      context.repeated++;
      process.stderr.write(`${tag} ${scenario.label} ${target.name}: other processes used ${(attemptForeign * 100).toFixed(0)}% of a core (> ${(MAX_OTHER_CPU * 100).toFixed(0)}%), again\n`);
    }
  }
  if (!kept) throw new Error('unreachable: no run');
  context.foreignMax = Math.max(context.foreignMax, foreign);
  const loadSide = busyOf(kept.loadSideCpuTicks, kept.ticksPerSecond, kept.elapsedMs);
  context.loadSideMax = Math.max(context.loadSideMax, loadSide);
  process.stderr.write(
    `${tag} ${scenario.label.padEnd(31)} ${target.name.padEnd(9)} ${int((kept.requests / kept.elapsedMs) * 1000).padStart(6)} req/s, ` +
      `CPU ${fixed(cpuPerRequestOf(kept), 0).padStart(5)} µs/req, p50 ${ms(kept.latencyP50Ms)} ms, target busy ${fixed(busyOf(kept.targetCpuTicks, kept.ticksPerSecond, kept.elapsedMs) * 100, 0)}%, load side ${fixed(loadSide * 100, 0)}%` +
      `${foreign > 0.05 ? `, other CPU ${(foreign * 100).toFixed(0)}% of a core` : ''}\n`,
  );
  return kept;
}
