// `npm run bench:instructions` (issue 5): CPU per request counted as instructions under valgrind's callgrind.
// Unlike CPU time, an instruction count does not count other processes' work (this project's VMs have heavy
// steal time, which makes `npm run bench` swing by ±15%). GC timing used to move the counts most: two quiet runs
// of one build counted 1.38 and 1.63 M per non-streamed request (2026-11-26), a major GC in or out of the window
// being worth ~100 k per request. So each count now runs from a full collection to the end of another (gc() over
// the target's inspector, inspector-gc.ts), less a window with no requests that counts that collection alone:
// one build beside itself in one run then counted 1.91 and 1.96 M (+2.7%), 2.37 and 2.36 M for streams (0.6%).
// The JIT still moves them a little: a difference under ~3% between two builds is not resolved.
//
// Four targets, each `node` under callgrind, in front of the bench's mock provider: the raw proxy
// (raw-proxy.ts), the same proxy calling the provider through got as the gateway configures it (got-proxy.ts:
// the floor for any gateway that keeps got), that proxy behind Express with the parsing no gateway skips
// (got-proxy.ts with PROXY_FRONT=express: the design before any feature), and the gateway (`node dist/server.js`, default configuration) as
// `npm run bench` runs it (bench-gateway.ts, issue 25's budget): the bench routing table, the request log as JSON
// lines to a file, metrics on, tracing off, one caller with limits counted in memory whose key every request sends.
// BENCH_INSTR_ROUTE picks the gateway's route: one-endpoint (default: `bench-one/llama3.2`, one endpoint and no
// fallback, as the shipped `local/llama3.2`) or two-endpoints (`bench/llama3.2`, as `npm run bench`).
// Each target first serves BENCH_INSTR_WARMUP requests (3000) of every scenario (non-streamed; 20-event
// streams) to warm the JIT; then, per scenario, its counters are zeroed and BENCH_INSTR_REQUESTS (1000) are
// served and counted, at 8 keep-alive connections; every answer is checked. (Under valgrind the JIT settles
// slowly: after 1000 requests per scenario the raw proxy still counted 0.78 M per request, after 3000, 0.30 M.) Counts are user-space instructions of the whole process
// (all threads, GC and JIT included); the kernel's work in system calls is not counted, so CPU time ratios
// (`npm run bench`) come out larger than these.
//
//   npm run bench:instructions                 about 10 minutes on 2 cores; writes its block of BENCHMARKS.md
//   npm run bench:instructions -- --no-write   prints only
//   npm run bench:tracing                      (--tracing) the gateway as shipped beside the gateway with OpenTelemetry
//                                              on, exporting traces and metrics (http/protobuf) to a local OTLP sink
//   npm run bench:instructions -- --pieces     what two parts of the gateway cost: beside the got proxy and the gateway,
//                                              the gateway with its request log off (LOG_LEVEL=warn) and the gateway
//                                              with no callers declared (anonymous, no limits); prints, writes nothing
//   npm run bench:instructions -- --parts      where the gateway's instructions go beside the got proxy's, by part
//                                              (both run with --perf-basic-prof; callgrind-parts.ts); prints only
//   npm run bench:instructions -- --against=DIR[,DIR…]   changes' before/after: this build beside the builds in each
//                                              DIR (a dist/ folder built from another commit), side by side; prints only
// Each target under callgrind (started, counted, driven): callgrind-target.ts; the parts: callgrind-parts.ts.
import { execFileSync, fork } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchDist, benchGatewayEnv } from './bench-gateway.js';
import { partsPerRequest, partsTable, type InstructionParts } from './callgrind-parts.js';
import { CONNECTIONS, drive, fail, HOST, readyWithin600s, startCounted, targetEnv, type Scenario } from './callgrind-target.js';
import { killAllOnExit, onStop, portMessage, track } from './children.js';
import { startOtlpSink } from './otlp-sink.js';
import { describeMachine, ensureBuilt, REPO, transpile, writeBlock } from './report.js';

const argv = process.argv.slice(2);
for (const arg of argv) {
  if (!/^--(no-write|tracing|pieces|parts|against=.+)$/.test(arg)) {
    process.stderr.write(`bench:instructions: unknown argument ${arg} (known: --no-write, --tracing, --pieces, --parts, --against=DIR)\n`);
    process.exit(2);
  }
}
const TRACING = argv.includes('--tracing');
const PIECES = argv.includes('--pieces');
const PARTS = argv.includes('--parts');
const AGAINST = argv.find((arg) => arg.startsWith('--against='))?.slice('--against='.length);
const AGAINST_DIRS = AGAINST?.split(',') ?? [];
for (const dir of AGAINST_DIRS) {
  if (!existsSync(join(dir, 'server.js'))) {
    process.stderr.write(`bench:instructions: --against: no server.js in ${dir} (give dist/ folders)\n`);
    process.exit(2);
  }
}
if ([TRACING, PIECES, PARTS, AGAINST !== undefined].filter(Boolean).length > 1) {
  process.stderr.write('bench:instructions: --tracing, --pieces, --parts and --against each pick the targets: give one\n');
  process.exit(2);
}
const WRITE = !argv.includes('--no-write') && !PIECES && !PARTS && AGAINST === undefined;
const WARMUP = count('BENCH_INSTR_WARMUP', 3000);
const REQUESTS = count('BENCH_INSTR_REQUESTS', 1000);
const ROUTES = { 'one-endpoint': 'bench-one/llama3.2', 'two-endpoints': 'bench/llama3.2' } as const;
const ROUTE = (process.env['BENCH_INSTR_ROUTE'] || 'one-endpoint') as keyof typeof ROUTES;
if (!(ROUTE in ROUTES)) {
  process.stderr.write(`bench:instructions: BENCH_INSTR_ROUTE must be one of ${Object.keys(ROUTES).join(', ')}\n`);
  process.exit(2);
}
const ROUTING_MODEL = ROUTES[ROUTE];
const UPSTREAM_MODEL = 'llama3.2';

function count(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1 || value > 1_000_000) {
    process.stderr.write(`bench:instructions: ${name} must be an integer in 1..1000000\n`);
    process.exit(2);
  }
  return value;
}

const MESSAGES = [{ role: 'user', content: 'Say hello.' }];
const SCENARIOS: readonly Scenario[] = [
  { label: 'non-streamed', streamed: false, body: JSON.stringify({ model: ROUTING_MODEL, messages: MESSAGES, max_tokens: 64 }) },
  { label: 'streamed, 20 events', streamed: true, body: JSON.stringify({ model: ROUTING_MODEL, messages: MESSAGES, stream: true, max_tokens: 20 }) },
];

// ---------------------------------------------------------------------------------------------- children

killAllOnExit('bench:instructions');
mkdirSync(join(REPO, 'node_modules', '.cache'), { recursive: true });
// Inside node_modules so that got-proxy.mjs finds `got`; removed on the way out.
const workDir = mkdtempSync(join(REPO, 'node_modules', '.cache', 'gateway-instructions-'));
onStop(() => rmSync(workDir, { recursive: true, force: true }));
const run = { workDir, perfMaps: PARTS };

// ---------------------------------------------------------------------------------------------- main

try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  execFileSync('callgrind_control', ['-h'], { stdio: 'ignore' });
} catch {
  fail('valgrind (with callgrind_control) is not installed; on Debian: apt-get install valgrind');
}
ensureBuilt('bench:instructions');
const started = Date.now();
const machine = describeMachine(execFileSync('valgrind', ['--version'], { encoding: 'utf8' }).trim());
process.stderr.write(`bench:instructions: ${TRACING || PARTS ? 2 : PIECES ? 4 : AGAINST === undefined ? 4 : 2 + AGAINST_DIRS.length} targets under callgrind, ${WARMUP} warm-up + ${REQUESTS} counted requests per scenario (about 10 min on 2 cores)\n`);

const mock = track(fork(transpile('bench-mock-provider.ts', workDir), [], { cwd: REPO, execArgv: [], env: targetEnv({}), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
const upstreamPort = String(await readyWithin600s(mock, 'the mock provider', portMessage(mock)));
const sink = TRACING ? await startOtlpSink(HOST) : undefined;
// Under callgrind on a loaded machine a request can wait longer than the default 10 s for its headers to be read.
const gatewayEnv = { ...benchGatewayEnv(Number(upstreamPort)), PORT: '0', HEADERS_TIMEOUT_MS: '600000', REQUEST_TIMEOUT_MS: '600000' };
const SERVER = benchDist();
const LOG_OFF = 'gateway, request log off';
const NO_CALLERS = 'gateway, no callers';
/** A target's name for an --against build: its folder, as given. */
const baseline = (dir: string) => `gateway, ${dir}`;
const gotProxy = () => startCounted(run, 'got proxy', transpile('got-proxy.ts', workDir), { UPSTREAM_PORT: upstreamPort }, UPSTREAM_MODEL, 'ipc');
const gateway = () => startCounted(run, 'gateway', SERVER, gatewayEnv, ROUTING_MODEL, 'log');
const targets = await Promise.all(
  sink
    ? [
        gateway(),
        // Everything on, as a user would run it: traces and metrics, the default protocol and batching.
        startCounted(run, 'gateway, tracing on', SERVER, { ...gatewayEnv, OTEL_EXPORTER_OTLP_ENDPOINT: sink.origin }, ROUTING_MODEL, 'log'),
      ]
    : PARTS
      ? [gotProxy(), gateway()]
      : PIECES
      ? [
          gotProxy(),
          gateway(),
          // Request lines are info: at warn none is built or written (the start-up line still is).
          startCounted(run, LOG_OFF, SERVER, { ...gatewayEnv, LOG_LEVEL: 'warn' }, ROUTING_MODEL, 'log'),
          startCounted(run, NO_CALLERS, benchDist({ callers: false }), gatewayEnv, ROUTING_MODEL, 'log'),
        ]
      : AGAINST !== undefined
        ? [gotProxy(), gateway(), ...AGAINST_DIRS.map((dir, index) => startCounted(run, baseline(dir), benchDist({ source: dir, name: `dist-against-${index}` }), gatewayEnv, ROUTING_MODEL, 'log'))]
        : [
            startCounted(run, 'raw proxy', transpile('raw-proxy.ts', workDir), { UPSTREAM_PORT: upstreamPort }, UPSTREAM_MODEL, 'ipc'),
            gotProxy(),
            startCounted(run, 'Express proxy', transpile('got-proxy.ts', workDir), { UPSTREAM_PORT: upstreamPort, PROXY_FRONT: 'express' }, UPSTREAM_MODEL, 'ipc'),
            gateway(),
          ],
);

// The targets run side by side: an instruction count does not depend on what the other core is doing.
const perRequest = new Map<string, number>();
const partsOf = new Map<string, InstructionParts>();
await Promise.all(
  targets.map(async (target) => {
    // Every scenario warms up before any is counted, so no count holds the JIT still compiling for the next one.
    for (const scenario of SCENARIOS) await drive(target, scenario, WARMUP);
    for (const scenario of SCENARIOS) {
      const instructions = await target.count(() => drive(target, scenario, REQUESTS));
      perRequest.set(`${target.name}|${scenario.label}`, instructions / REQUESTS);
      if (PARTS) partsOf.set(`${target.name}|${scenario.label}`, partsPerRequest(target.files, REQUESTS));
      process.stderr.write(`${target.name.padEnd(9)} ${scenario.label.padEnd(20)} ${(instructions / REQUESTS / 1e6).toFixed(3)} M instructions per request\n`);
    }
  }),
);

// The log file got a line per request (the batching destination flushes within about a second).
const served = SCENARIOS.length * (WARMUP + REQUESTS);
const logged = new Map<string, number>();
for (const target of targets) {
  for (let waited = 0; target.name !== LOG_OFF && (target.logLines() ?? served) < served && waited < 10_000; waited += 250) await sleep(250);
  if (target.name === LOG_OFF) continue;
  const lines = target.logLines();
  if (lines === null) continue;
  logged.set(target.name, lines);
  if (lines < served) fail(`${target.name} wrote ${lines} request log lines to its log file for ${served} requests`);
}
const gatewaySetup =
  `- The gateway as ops run it: route \`${ROUTING_MODEL}\` (BENCH_INSTR_ROUTE=${ROUTE}), request log on as JSON lines to a file ` +
  `(${[...logged].map(([name, lines]) => `${name}: ${lines.toLocaleString('en-US')} lines for ${served.toLocaleString('en-US')} requests`).join('; ')}), ` +
  'metrics on, tracing off unless named, one caller with limits counted in memory (its key sent with every request, to every target).';
const settings = ['BENCH_INSTR_WARMUP', 'BENCH_INSTR_REQUESTS', 'BENCH_INSTR_ROUTE']
  .filter((name) => process.env[name])
  .map((name) => `${name}=${process.env[name]} `)
  .join('');
const millions = (n: number) => (n / 1e6).toFixed(2);
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
if (sink) {
  const rows = SCENARIOS.map((scenario) => {
    const [off, on] = ['gateway', 'gateway, tracing on'].map((name) => perRequest.get(`${name}|${scenario.label}`)!) as [number, number];
    return `| ${scenario.label} | ${millions(off)} M | ${millions(on)} M | +${((on - off) / 1e3).toFixed(0)} k | **${ratio(on, off)}** |`;
  });
  const markdown = [
    '## OpenTelemetry on and off: instructions per request (callgrind)',
    '',
    ...machine,
    `- Command: \`${settings}npm run bench:tracing\`; ${WARMUP} warm-up + ${REQUESTS} counted requests per target and scenario, ${CONNECTIONS} keep-alive connections`,
    '',
    '| Scenario | gateway (tracing off) | gateway, tracing on | difference per request | on ÷ off |',
    '|---|---:|---:|---:|---:|',
    ...rows,
    '',
    '- *tracing on*: `OTEL_EXPORTER_OTLP_ENDPOINT` set to a local OTLP sink (this script, answering 200), nothing else: every',
    '  request sampled (a SERVER and a CLIENT span), traces and GenAI metrics exported over http/protobuf by the SDK\'s',
    `  batch processor, so the count includes encoding and sending them. The sink received ${sink.requests()} export requests`,
    `  (${(sink.bytes() / 1024).toFixed(0)} KiB) over the whole run.`,
    '- *tracing off*: the shipped default (no OTEL_* variable): the SDK is not loaded, no middleware is installed.',
    gatewaySetup,
    '- User-space instructions of the whole target process per request (see the block above for how steady they are).',
    `- Wall time ${((Date.now() - started) / 60_000).toFixed(1)} min.`,
  ].join('\n');
  report('TRACING', markdown);
}
if (PARTS) {
  const markdown = [
    '## Where the instructions go: the gateway beside the got proxy, by part (callgrind)',
    '',
    ...machine,
    `- Command: \`${settings}npm run bench:instructions -- --parts\`; ${WARMUP} warm-up + ${REQUESTS} counted requests per target and scenario, ${CONNECTIONS} keep-alive connections`,
    ...SCENARIOS.flatMap((scenario) => ['', partsTable(scenario.label, partsOf.get(`got proxy|${scenario.label}`)!, partsOf.get(`gateway|${scenario.label}`)!)]),
    '',
    gatewaySetup,
    `- Wall time ${((Date.now() - started) / 60_000).toFixed(1)} min.`,
  ].join('\n');
  report('PARTS', markdown);
}
if (PIECES || AGAINST !== undefined) {
  const others = PIECES ? [LOG_OFF, NO_CALLERS] : AGAINST_DIRS.map(baseline);
  const rows = SCENARIOS.map((scenario) => {
    const of = (name: string) => perRequest.get(`${name}|${scenario.label}`)!;
    const gateway = of('gateway');
    const cells = others.map((name) => `${millions(of(name))} M (${gateway >= of(name) ? '+' : '−'}${(Math.abs(gateway - of(name)) / 1e3).toFixed(0)} k)`);
    return `| ${scenario.label} | ${millions(of('got proxy'))} M | ${millions(gateway)} M | ${cells.join(' | ')} | ${ratio(gateway, of('got proxy'))} |`;
  });
  const markdown = [
    PIECES ? '## What parts of the gateway cost: instructions per request (callgrind)' : '## This build against others: instructions per request (callgrind)',
    '',
    ...machine,
    `- Command: \`${settings}npm run bench:instructions -- ${PIECES ? '--pieces' : `--against=${AGAINST}`}\`; ${WARMUP} warm-up + ${REQUESTS} counted requests per target and scenario, ${CONNECTIONS} keep-alive connections`,
    '',
    `| Scenario | got proxy | gateway | ${others.map((name) => `${name} (gateway minus it)`).join(' | ')} | gateway ÷ got proxy |`,
    `|---|---:|---:|${others.map(() => '---:|').join('')}---:|`,
    ...rows,
    '',
    gatewaySetup,
    PIECES
      ? `- *${LOG_OFF}*: LOG_LEVEL=warn. *${NO_CALLERS}*: bench-routes.yaml without its callers section (anonymous, no limits, no key digested).`
      : '- Each other build runs with the same routing table and configuration as this one.',
    `- Wall time ${((Date.now() - started) / 60_000).toFixed(1)} min.`,
  ].join('\n');
  report('PIECES', markdown);
}
const rows = SCENARIOS.map((scenario) => {
  const [raw, got, express, gateway] = ['raw proxy', 'got proxy', 'Express proxy', 'gateway'].map((name) => perRequest.get(`${name}|${scenario.label}`)!) as [number, number, number, number];
  return { scenario, raw, got, express, gateway };
});
const markdown = [
  '## Instructions per request (callgrind)',
  '',
  ...machine,
  `- Command: \`${settings}npm run bench:instructions\`; ${WARMUP} warm-up + ${REQUESTS} counted requests per target and scenario, ${CONNECTIONS} keep-alive connections`,
  '',
  '| Scenario | raw proxy | got proxy (raw + got) | Express proxy | gateway | got proxy ÷ raw | gateway ÷ raw | gateway ÷ got proxy | Express proxy ÷ got proxy | gateway ÷ Express proxy |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    ({ scenario, raw, got, express, gateway }) =>
      `| ${scenario.label} | ${millions(raw)} M | ${millions(got)} M | ${millions(express)} M | ${millions(gateway)} M | ${ratio(got, raw)} | **${ratio(gateway, raw)}** | ${ratio(gateway, got)} | ${ratio(express, got)} | ${ratio(gateway, express)} |`,
  ),
  '',
  '- User-space instructions of the whole target process per request (JIT, GC and every thread included; system calls',
  '  not counted), each window from one full collection to the end of another, less that collection alone. One build',
  '  beside itself in one run counted 1.91 and 1.96 M per non-streamed request (2026-11-26): under ~3% is not resolved.',
  "- *got proxy*: the raw proxy with its upstream call made by got as the gateway configures it, nothing parsed or rewritten:",
  '  the least any gateway that keeps got can spend; the budget (issue 25) is *gateway ÷ got proxy*: ≤ 1.25× non-streamed, ≤ 1.3× for 20-event streams.',
  '- *Express proxy*: the got proxy behind Express, reading and parsing the body and the non-streamed answer (`got-proxy.ts`, `PROXY_FRONT=express`): the design before any feature.',
  gatewaySetup,
  `- Wall time ${((Date.now() - started) / 60_000).toFixed(1)} min.`,
].join('\n');
report('INSTRUCTIONS', markdown);

/** Prints the block, writes it into BENCHMARKS.md (unless --no-write) and ends the run. */
function report(block: string, markdown: string): never {
  process.stdout.write(`\n${markdown}\n`);
  if (WRITE) {
    writeBlock(block, markdown, '# Benchmarks\n');
    process.stderr.write('bench:instructions: wrote BENCHMARKS.md\n');
  }
  mock.kill('SIGKILL');
  process.exit(0);
}
