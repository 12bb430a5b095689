// The one-time warm-up of each target in `npm run bench`, right after it starts: 1-second slices of load,
// every scenario the target serves in turn, so that V8 has compiled and settled every path before the first
// measured window. Each slice's CPU per request is kept: the report shows how far from settled the first
// slices were (how long figures take to settle), and the run fails if any warm-up answer fails its check.
import { fixed } from './format.js';
import { cpuPerRequestOf, loadOnce, type RunContext } from './measured-window.js';
import type { Scenario } from './scenarios.js';
import type { Target } from './targets.js';

/** CPU µs per request in each warm-up slice, per scenario id, in the order the slices ran. */
export type WarmUpSlices = ReadonlyMap<string, readonly number[]>;

export async function warmUp(context: RunContext, target: Target, scenarios: readonly Scenario[], seconds: number): Promise<WarmUpSlices> {
  const slices = new Map<string, number[]>(scenarios.map((s) => [s.id, []]));
  for (let k = 0; k < seconds; k++) {
    const scenario = scenarios[k % scenarios.length]!;
    const load = await loadOnce(context, target, scenario, 0, 1, false);
    slices.get(scenario.id)!.push(cpuPerRequestOf(load));
  }
  if (seconds > 0) {
    const shown = scenarios.map((s) => `${s.id} ${slices.get(s.id)!.map((v) => fixed(v, 0)).join(' → ')}`).join('; ');
    process.stderr.write(`[warm-up] ${target.name.padEnd(9)} ${seconds} × 1 s, CPU µs/req per slice: ${shown}\n`);
  }
  return slices;
}
