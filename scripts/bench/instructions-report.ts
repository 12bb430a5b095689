// The BENCHMARKS.md blocks `npm run bench:instructions` writes (instructions.ts counts, this file words the result).
// The budget line they give a verdict on: issue 40's line 2, instructions per request ≤ 1.1× the Express proxy, both kinds.
import { functionsTable, partsTable, type InstructionParts } from './callgrind-parts.js';
import type { CountedTarget, Scenario } from './callgrind-target.js';

/** Issue 40, line 2: the gateway's instructions per request over the Express proxy's, both kinds. */
export const EXPRESS_PROXY_BUDGET = 1.1;

export interface CountedRunResult {
  readonly machine: readonly string[];
  /** `NAME=value ` settings the run was given, for its command line. */
  readonly settings: string;
  readonly warmup: number;
  readonly requests: number;
  readonly connections: number;
  readonly scenarios: readonly Scenario[];
  /** `target|scenario` → the serving process's instructions per request. */
  readonly perRequest: ReadonlyMap<string, number>;
  /** `target|scenario` → a gateway's cluster primary's instructions per request, in the same window. */
  readonly primaryPerRequest: ReadonlyMap<string, number>;
  readonly gatewaySetup: string;
  wallMinutes(): number;
}

const millions = (n: number) => (n / 1e6).toFixed(2);
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
const header = (run: CountedRunResult, command: string) => [
  ...run.machine,
  `- Command: \`${run.settings}${command}\`; ${run.warmup} warm-up + ${run.requests} counted requests per target and scenario, ${run.connections} keep-alive connections`,
];
const wall = (run: CountedRunResult) => `- Wall time ${run.wallMinutes().toFixed(1)} min.`;

/** What the gateway ran as, which processes were counted and that they served (their request log lines, by pid). */
export function describeGatewaySetup(args: { route: string; routingModel: string; served: number; logged: ReadonlyMap<string, number>; targets: readonly CountedTarget[] }): string {
  const gateways = args.targets.filter((target) => target.processes.length > 1);
  const counted = gateways.map((target) => `${target.name}: worker pid ${target.processes[0]!.pid}, primary pid ${target.processes[1]!.pid}`).join('; ');
  return (
    `- The gateway as ops run it: \`node dist/server.js\` (a cluster primary and one worker), route \`${args.routingModel}\` (BENCH_INSTR_ROUTE=${args.route}), request log on as JSON lines to a file ` +
    `(${[...args.logged].map(([name, lines]) => `${name}: ${lines.toLocaleString('en-US')} lines from its worker for ${args.served.toLocaleString('en-US')} requests`).join('; ')}), ` +
    'metrics on, prices on, tracing off unless named, one caller with limits counted in memory (its key sent with every request, to every target).\n' +
    `- Processes counted: the cluster worker that serves (its pid from /health, checked against the pid on every request log line), and the primary beside it, so any per-request work it does shows (the only worker counts its limited caller itself) (${counted}).`
  );
}

/** The main block: every target side by side, with the verdict on issue 40's line 2. */
export function instructionsBlock(run: CountedRunResult): string {
  const of = (name: string, scenario: Scenario) => run.perRequest.get(`${name}|${scenario.label}`)!;
  const rows = run.scenarios.map((scenario) => {
    const [raw, got, express, worker] = ['raw proxy', 'got proxy', 'Express proxy', 'gateway'].map((name) => of(name, scenario)) as [number, number, number, number];
    const primary = run.primaryPerRequest.get(`gateway|${scenario.label}`) ?? 0;
    const gateway = worker + primary;
    const met = gateway / express <= EXPRESS_PROXY_BUDGET;
    return {
      met,
      row: `| ${scenario.label} | ${millions(raw)} M | ${millions(got)} M | ${millions(express)} M | ${millions(worker)} M | ${(primary / 1e3).toFixed(0)} k | ${millions(gateway)} M | ${ratio(gateway, got)} | ${ratio(express, got)} | ${ratio(worker, express)} | **${ratio(gateway, express)}** ${met ? 'met' : 'NOT met'} |`,
    };
  });
  return [
    '## Instructions per request (callgrind)',
    '',
    ...header(run, 'npm run bench:instructions'),
    '',
    `Issue 40, line 2 — the gateway ≤ ${EXPRESS_PROXY_BUDGET}× the Express proxy, both kinds: **${rows.every((r) => r.met) ? 'met' : 'not met'}**.`,
    '',
    '| Scenario | raw proxy | got proxy (raw + got) | Express proxy | gateway worker | gateway primary | gateway (worker + primary) | gateway ÷ got proxy | Express proxy ÷ got proxy | worker ÷ Express proxy | gateway ÷ Express proxy (≤ 1.1×) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows.map((r) => r.row),
    '',
    '- User-space instructions per request of each process counted (JIT, GC and every thread included; system calls',
    '  not counted), after an uncounted warm-up, no collection forced, heaps fixed (docs/performance.md); with windows of',
    '  6,000 requests the gateway repeated within 3.8% non-streamed and 2.7% per stream in six runs of one build.',
    "- *got proxy*: the raw proxy with its upstream call made by got as the gateway configures it, nothing parsed or rewritten: the least any gateway that keeps got can spend.",
    '- *Express proxy*: the got proxy behind Express, reading and parsing the body and the non-streamed answer (`got-proxy.ts`, `PROXY_FRONT=express`): the design before any feature, and the base of the budget.',
    '- *gateway*: its worker, which serves, plus its primary in the same window (the verdict counts both: every instruction a request costs the gateway).',
    run.gatewaySetup,
    wall(run),
  ].join('\n');
}

export function tracingBlock(run: CountedRunResult, sink: { requests(): number; bytes(): number }): string {
  const rows = run.scenarios.map((scenario) => {
    const [off, on] = ['gateway', 'gateway, tracing on'].map((name) => run.perRequest.get(`${name}|${scenario.label}`)!) as [number, number];
    return `| ${scenario.label} | ${millions(off)} M | ${millions(on)} M | +${((on - off) / 1e3).toFixed(0)} k | **${ratio(on, off)}** |`;
  });
  return [
    '## OpenTelemetry on and off: instructions per request (callgrind)',
    '',
    ...header(run, 'npm run bench:tracing'),
    '',
    '| Scenario | gateway worker (tracing off) | gateway worker, tracing on | difference per request | on ÷ off |',
    '|---|---:|---:|---:|---:|',
    ...rows,
    '',
    '- *tracing on*: `OTEL_EXPORTER_OTLP_ENDPOINT` set to a local OTLP sink (this script, answering 200), nothing else: every',
    "  request sampled (a SERVER and a CLIENT span), traces and GenAI metrics exported over http/protobuf by the SDK's",
    `  batch processor, so the count includes encoding and sending them. The sink received ${sink.requests()} export requests`,
    `  (${(sink.bytes() / 1024).toFixed(0)} KiB) over the whole run.`,
    '- *tracing off*: the shipped default (no OTEL_* variable): the SDK is not loaded, no middleware is installed.',
    run.gatewaySetup,
    '- User-space instructions of the serving process per request (see the block above for how steady they are).',
    wall(run),
  ].join('\n');
}

/** Functions listed per scenario under its parts: enough to name what each part's difference is made of. */
const TOP_FUNCTIONS = 25;

export function partsBlock(run: CountedRunResult, partsOf: ReadonlyMap<string, InstructionParts>, functionsOf: ReadonlyMap<string, ReadonlyMap<string, number>>): string {
  const of = <T>(map: ReadonlyMap<string, T>, target: string, scenario: Scenario) => map.get(`${target}|${scenario.label}`)!;
  return [
    '## Where the instructions go: the gateway beside the got proxy, by part (callgrind)',
    '',
    ...header(run, 'npm run bench:instructions -- --parts'),
    ...run.scenarios.flatMap((scenario) => ['', partsTable(scenario.label, of(partsOf, 'got proxy', scenario), of(partsOf, 'gateway', scenario))]),
    ...run.scenarios.flatMap((scenario) => ['', functionsTable(scenario.label, of(functionsOf, 'got proxy', scenario), of(functionsOf, 'gateway', scenario), TOP_FUNCTIONS)]),
    '',
    run.gatewaySetup,
    '- The gateway\'s parts are its worker\'s (the process that serves).',
    wall(run),
  ].join('\n');
}

type PiecesChoice = { pieces: readonly string[]; logOff: string; noCallers: string } | { against: string; others: readonly string[] };

export function piecesBlock(run: CountedRunResult, choice: PiecesChoice): string {
  const others = 'pieces' in choice ? choice.pieces : choice.others;
  const rows = run.scenarios.map((scenario) => {
    const of = (name: string) => run.perRequest.get(`${name}|${scenario.label}`)!;
    const gateway = of('gateway');
    const cells = others.map((name) => `${millions(of(name))} M (${gateway >= of(name) ? '+' : '−'}${(Math.abs(gateway - of(name)) / 1e3).toFixed(0)} k)`);
    return `| ${scenario.label} | ${millions(of('got proxy'))} M | ${millions(gateway)} M | ${cells.join(' | ')} | ${ratio(gateway, of('got proxy'))} |`;
  });
  return [
    'pieces' in choice ? '## What parts of the gateway cost: instructions per request (callgrind)' : '## This build against others: instructions per request (callgrind)',
    '',
    ...header(run, `npm run bench:instructions -- ${'pieces' in choice ? '--pieces' : `--against=${choice.against}`}`),
    '',
    `| Scenario | got proxy | gateway | ${others.map((name) => `${name} (gateway minus it)`).join(' | ')} | gateway ÷ got proxy |`,
    `|---|---:|---:|${others.map(() => '---:|').join('')}---:|`,
    ...rows,
    '',
    run.gatewaySetup,
    '- Gateways: their worker\'s instructions (the process that serves); the primary\'s are in the main block.',
    'pieces' in choice
      ? `- *${choice.logOff}*: LOG_LEVEL=warn. *${choice.noCallers}*: bench-routes.yaml without its callers section (anonymous, no limits, no key digested).`
      : '- Each other build runs with the same routing table and configuration as this one.',
    wall(run),
  ].join('\n');
}
