// The figures of `npm run bench` per scenario and target: medians over the rounds of each measured window and TTFE run.
import { cpuPerRequestOf } from './measured-window.js';
import { median } from './proc-stats.js';
import type { Sample } from './rounds.js';
import type { Scenario } from './scenarios.js';

export interface Summary {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly cpuPerRequest: number;
  readonly cpuPerRequestMin: number;
  readonly cpuPerRequestMax: number;
  readonly busy: number;
  readonly ttfeP50: number;
  readonly ttfeP99: number;
  readonly rss: number;
  readonly requests: number;
}

function summarise(samples: readonly Sample[]): Summary {
  const perRequest = samples.map((s) => cpuPerRequestOf(s.load));
  return {
    rps: median(samples.map((s) => (s.load.requests / s.load.elapsedMs) * 1000)),
    p50: median(samples.map((s) => s.load.latencyP50Ms)),
    p99: median(samples.map((s) => s.load.latencyP99Ms)),
    cpuPerRequest: median(perRequest),
    cpuPerRequestMin: Math.min(...perRequest),
    cpuPerRequestMax: Math.max(...perRequest),
    busy: median(samples.map((s) => s.load.targetCpuTicks / s.load.ticksPerSecond / (s.load.elapsedMs / 1000))),
    ttfeP50: median(samples.map((s) => s.sequential.firstByteP50Ms)),
    ttfeP99: median(samples.map((s) => s.sequential.firstByteP99Ms)),
    rss: samples.at(-1)!.rss,
    requests: samples.reduce((sum, s) => sum + s.load.requests, 0),
  };
}

/** `get(scenario, target)`: the summary of that pair (every pair the run measured). */
export function summaries(samples: ReadonlyMap<string, readonly Sample[]>): (scenario: Scenario, target: string) => Summary {
  const byKey = new Map<string, Summary>();
  for (const [key, list] of samples) byKey.set(key, summarise(list));
  return (scenario, target) => {
    const summary = byKey.get(`${scenario.id}:${target}`);
    if (!summary) throw new Error(`no figures for ${target}, ${scenario.label}`);
    return summary;
  };
}

/**
 * Marginal CPU per event: what one more event costs, from the 1,000- and the 20-event streams of the same
 * target ((CPU per 1,000-event request − CPU per 20-event request) ÷ 980), so per-request work drops out.
 */
export function marginalPerEvent(long: Summary, short: Summary, longEvents: number, shortEvents: number): number {
  return (long.cpuPerRequest - short.cpuPerRequest) / (longEvents - shortEvents);
}
