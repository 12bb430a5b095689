// The report of `npm run bench`'s comparison: the machine, the table of every scenario and target, the budget
// table, the notes (settings, warm-up, checks, disturbance); printed, and written to BENCHMARKS.md unless told not to.
import os from 'node:os';
import { METHOD, TEMPLATE } from './bench-text.js';
import { budgetTable, perEvent } from './budget-table.js';
import { fixed, int, mib, ms, signed } from './format.js';
import { BENCHMARKS_MD, blockFile, describeMachine, packageVersion, writeBlock } from './report.js';
import type { ComparisonRun } from './rounds.js';
import { ONE_ENDPOINT, SCENARIOS, scenario, servesScenario, type Scenario } from './scenarios.js';
import { commandLine, CONNECTIONS, MAX_OTHER_CPU, OTHER_CPUS, PIN, RETRIES, ROUNDS, SECONDS, START_WARMUP_SECONDS, TARGET_CPUS, TTFE_REQUESTS, TTFE_WARMUP, WARMUP_SECONDS, WRITE } from './settings.js';
import { summaries, type Summary } from './summary.js';

const TARGETS = ['gateway', 'raw proxy', 'got proxy', 'Express proxy'] as const;

function resultsTable(get: (s: Scenario, target: string) => Summary): string[] {
  const table = [
    '| Scenario | Target | req/s | latency p50 / p99 (ms) | CPU µs per request (rounds) | target CPU busy | TTFE p50 / p99 (ms) | RSS at end (MiB) |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const s of SCENARIOS) {
    for (const name of TARGETS.filter((t) => servesScenario(t, s))) {
      const x = get(s, name);
      const range = ROUNDS > 1 ? ` (${fixed(x.cpuPerRequestMin, 0)}–${fixed(x.cpuPerRequestMax, 0)})` : '';
      const ttfe = `${s.events === null ? '(' : ''}${ms(x.ttfeP50)} / ${ms(x.ttfeP99)}${s.events === null ? ')' : ''}`;
      table.push(`| ${s.label} | ${name} | ${int(x.rps)} | ${ms(x.p50)} / ${ms(x.p99)} | **${fixed(x.cpuPerRequest, 0)}**${range} | ${(x.busy * 100).toFixed(0)}% | ${ttfe} | ${mib(x.rss).toFixed(0)} |`);
    }
    if (s.gatewayOnly) continue;
    const [gw, rp, gp, xp] = TARGETS.map((t) => get(s, t)) as [Summary, Summary, Summary, Summary];
    const ttfe = (a: Summary, b: Summary, bold: boolean) => (s.events === null ? '' : bold ? `**${signed(a.ttfeP50 - b.ttfeP50)} ms** (p50)` : `${signed(a.ttfeP50 - b.ttfeP50)} ms (p50)`);
    table.push(`| ${s.label} | **gateway ÷ got proxy** | ${fixed(gw.rps / gp.rps, 2)}× | | **${fixed(gw.cpuPerRequest / gp.cpuPerRequest, 2)}×** | | ${ttfe(gw, gp, true)} | |`);
    table.push(`| ${s.label} | got proxy ÷ raw | ${fixed(gp.rps / rp.rps, 2)}× | | ${fixed(gp.cpuPerRequest / rp.cpuPerRequest, 2)}× | | ${ttfe(gp, rp, false)} | |`);
    table.push(`| ${s.label} | Express proxy ÷ got proxy (the design, before any feature) | ${fixed(xp.rps / gp.rps, 2)}× | | ${fixed(xp.cpuPerRequest / gp.cpuPerRequest, 2)}× | | ${ttfe(xp, gp, false)} | |`);
    table.push(`| ${s.label} | gateway ÷ Express proxy (the gateway's features) | ${fixed(gw.rps / xp.rps, 2)}× | | ${fixed(gw.cpuPerRequest / xp.cpuPerRequest, 2)}× | | ${ttfe(gw, xp, false)} | |`);
  }
  return table;
}

/**
 * Per target: each scenario's first and last warm-up slice beside its measured median, and from when on every
 * slice stayed within 15% of that median (its start in seconds of warm-up; the scenarios take turns, one slice each).
 */
function warmUpNote(run: ComparisonRun, get: (s: Scenario, target: string) => Summary): string {
  if (START_WARMUP_SECONDS === 0) return '- No one-time warm-up (`BENCH_START_WARMUP_SECONDS=0`).';
  const parts = TARGETS.map((name) => {
    const slices = run.warmUps.get(name)!;
    const served = SCENARIOS.filter((s) => (slices.get(s.id) ?? []).length > 0);
    const shown = served.map((s) => {
      const list = slices.get(s.id)!;
      const measured = get(s, name).cpuPerRequest;
      let from = list.length;
      while (from > 0 && list[from - 1]! <= measured * 1.15) from--;
      const settled = from === list.length ? 'never within 15%' : `within 15% from ${from * served.length + served.indexOf(s)} s on`;
      return `${s.id} ${fixed(list[0]!, 0)} → ${fixed(list.at(-1)!, 0)} (measured ${fixed(measured, 0)}; ${settled})`;
    });
    return `${name}: ${shown.join(', ')}`;
  });
  return `- Settling: CPU µs per request in the first and the last 1-s slice of each target's one-time warm-up, against the measured median: ${parts.join('; ')}.`;
}

export function writeComparisonReport(run: ComparisonRun): void {
  const get = summaries(run.samples);
  const { context } = run;
  const sse20 = scenario('sse20');
  const sse1000 = scenario('sse1000');
  const raw = perEvent(get, 'raw proxy', sse1000, sse20);
  const served = Object.entries(run.servedBy)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, n]) => `${name} ${int(n)}`)
    .join(', ');
  const notes = [
    `- ${CONNECTIONS} connections; each target first warmed up once for ${START_WARMUP_SECONDS} s (1-s slices, every scenario it serves in turn), then per target and scenario ${WARMUP_SECONDS} s warm-up + ${SECONDS} s measured, ${ROUNDS} round(s); medians over the rounds. ` +
      `TTFE: ${TTFE_REQUESTS} sequential requests per target (after ${TTFE_WARMUP}), alternating between the targets, per scenario and round; for non-streamed answers (in parentheses) the time to the first body byte.`,
    warmUpNote(run, get),
    `- Pinning ${PIN ? `on: the target under load on CPU ${TARGET_CPUS}; the load generator, the mock provider and the orchestrator on CPU ${OTHER_CPUS}` : 'off'}. ` +
      `*target CPU busy* is the target's CPU time ÷ wall time in the window (100% = one core): below 100% the target was waiting for the load generator or the provider, and its req/s is a floor. ` +
      `The load side (load generator + mock provider + orchestrator) used at most ${(context.loadSideMax * 100).toFixed(0)}% of a core${PIN ? ` on its ${os.cpus().length - 1} CPU(s)` : ''}.`,
    `- Per event on 1,000-event streams: the budget's verdict uses the marginal cost ((CPU per 1,000-event request − CPU per 20-event request) ÷ 980), in which per-request work cancels out; ÷ 1,001 (events and [DONE]) is shown beside it. Raw proxy, the floor: ${fixed(raw.marginal, 2)} µs marginal.`,
    `- ${ONE_ENDPOINT ? 'The OpenAI-dialect route has one endpoint and no fallback (BENCH_ROUTE=one-endpoint); the Anthropic one two' : 'Two endpoints per provider'} (\`scripts/bench/bench-routes.yaml\`), all on the mock: the gateway's TTFE answers were served by ${served} (\`x-gateway-served-by\`).`,
    `- The gateway as ops run it: request log on, JSON lines to a file (its stdout redirected, not a pipe), metrics on, tracing off, one caller with limits counted in memory whose key every request sends (to every target), a price on every model. ` +
      `Every answer was checked; no error, timeout, non-2xx or failed check. The gateway's log file has ${int(run.logLines)} request lines and \`gateway_requests_total\` counted ${int(run.counted)} requests for ${int(context.gatewayAnswers)} answers (every line written).`,
    `- Other CPU on the machine during the measured windows kept: at most ${(context.foreignMax * 100).toFixed(0)}% of a core${context.foreignMax > MAX_OTHER_CPU ? ' — **something else was running; these figures are noisier than usual**' : ''}; ` +
      `${context.repeated} run(s) made again because other processes used more than ${(MAX_OTHER_CPU * 100).toFixed(0)}% of a core (up to ${RETRIES} repeats, the quietest kept).`,
    `- Wall time ${run.elapsedMin.toFixed(1)} min.`,
  ];
  const markdown = [
    '## Latest run: gateway vs got proxy (and the raw proxy, the floor)',
    '',
    ...describeMachine(`autocannon ${packageVersion('autocannon')}`),
    `- Command: \`${commandLine()}\``,
    '',
    ...resultsTable(get),
    '',
    ...budgetTable(get),
    '',
    ...notes,
  ].join('\n');
  process.stdout.write(`\n${markdown}\n`);
  if (WRITE) {
    writeBlock('MAIN', markdown, TEMPLATE);
    writeBlock('METHOD', METHOD, TEMPLATE);
    process.stderr.write(`bench: wrote ${BENCHMARKS_MD} and ${blockFile('METHOD')}\n`);
  }
}
