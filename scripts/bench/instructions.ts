// `npm run bench:instructions` (issue 5): CPU per request counted as instructions under valgrind's callgrind.
// Unlike CPU time, an instruction count does not count other processes' work (this project's VMs have heavy
// steal time, which makes `npm run bench` swing by ±15%). What moved the counts was V8's own state, three ways:
// - The young generation's size and the memory reducer follow allocation per millisecond, which under valgrind
//   (~50× slower) looks like an idle process and moves with the machine's load. Every target therefore starts with
//   STEADY_HEAP_FLAGS: the young generation fixed at the size a busy process grows it to, no memory reducer.
// - A full collection forced between windows (gc(), as this bench did until 2026-11-29) deoptimizes the hot
//   functions whose optimized code embeds an object it frees ("embedded weak objects cleared" under --trace-deopt),
//   and they are compiled again over the next ~6,000 requests (natively: a got proxy ran 40 optimizations in the
//   first 1,000 after each gc(), 157–268 per 16,000, and never settled). That compiling landed in the window: V8's
//   compiler was 0.45–1.2 M of a count, growing with the process's age, and the got proxy counted 1.04 to 1.66 M per
//   non-streamed request in runs of one build. The collections a process makes itself under load do not do this
//   (17 mark-compacts in 40,000 requests of a got proxy, 13 optimizations in its last 20,000). So nothing is forced:
//   a window counts the collections its own requests cause, as they come, and holds several (a got proxy
//   mark-compacts every ~2,500 requests here).
// - The JIT settles slowly (natively, the gateway still ran 134 optimizations in its 8,000th–12,000th request, then
//   5 and 1 in the two 4,000 after its 24,000th). So the warm-up is long, and runs uninstrumented (valgrind --instr-atstart=no: several
//   times faster); counting switches instrumentation on.
// - A mark-compact more or fewer in a window moves the gateway's count by tens of k. Windows of 2,000 requests
//   (the default until 2026-11-29) put its count anywhere in ±7% between runs; windows of 6,000 repeated within
//   3.8% non-streamed and 2.7% per stream in six runs (docs/performance.md).
//
// Four targets, each `node` under callgrind, in front of the bench's mock provider: the raw proxy
// (raw-proxy.ts), the same proxy calling the provider through got as the gateway configures it (got-proxy.ts:
// the floor for any gateway that keeps got), that proxy behind Express with the parsing no gateway skips
// (got-proxy.ts with PROXY_FRONT=express: the design before any feature), and the gateway (`node dist/server.js`, default configuration) as
// `npm run bench` runs it (bench-gateway.ts, issue 40's budget): the bench routing table, the request log as JSON
// lines to a file, metrics on, prices on, tracing off, one caller with limits counted in memory whose key every
// request sends. That is a cluster primary and its worker: valgrind follows the fork, the worker (which serves) is
// counted, and so is the primary beside it (any per-request work it does shows); callgrind-target.ts.
// BENCH_INSTR_ROUTE picks the gateway's route: two-endpoints (default: `bench/llama3.2`, as ops run it and as
// `npm run bench`) or one-endpoint (`bench-one/llama3.2`, one endpoint and no fallback, as the shipped `local/llama3.2`).
// Each target first serves BENCH_INSTR_WARMUP requests (20000) of every scenario (non-streamed; 20-event
// streams), uncounted, to warm the JIT; then, per scenario, its counters are zeroed and BENCH_INSTR_REQUESTS (6000)
// are served and counted, at 8 keep-alive connections; every answer is checked. Counts are user-space instructions of the whole process
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
//                                              and the functions that grew most (both run with --perf-basic-prof;
//                                              callgrind-parts.ts); prints only
//   npm run bench:instructions -- --against=DIR[,DIR…]   changes' before/after: this build beside the builds in each
//                                              DIR (a dist/ folder built from another commit), side by side; prints only
// Each target under callgrind (started, counted, driven): callgrind-target.ts; the parts: callgrind-parts.ts.
import { execFileSync, fork } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchDist, benchGatewayEnv } from './bench-gateway.js';
import { partsPerRequest, type InstructionParts } from './callgrind-parts.js';
import { CONNECTIONS, drive, fail, HOST, readyWithin600s, startCounted, targetEnv, type Scenario } from './callgrind-target.js';
import { killAllOnExit, onStop, portMessage, track } from './children.js';
import { startOtlpSink } from './otlp-sink.js';
import { describeGatewaySetup, instructionsBlock, partsBlock, piecesBlock, tracingBlock } from './instructions-report.js';
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
const WARMUP = count('BENCH_INSTR_WARMUP', 20000);
const REQUESTS = count('BENCH_INSTR_REQUESTS', 6000);
const ROUTES = { 'one-endpoint': 'bench-one/llama3.2', 'two-endpoints': 'bench/llama3.2' } as const;
// Two endpoints, as ops run the gateway (issue 40's budget) and as `npm run bench` does.
const ROUTE = (process.env['BENCH_INSTR_ROUTE'] || 'two-endpoints') as keyof typeof ROUTES;
/** Under any request's count (the raw proxy's is ~0.3 M): a process counted below it served nothing. */
const IDLE_PER_REQUEST = 50_000;
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
/**
 * A busy process's heap, fixed (see the top): a semi-space of 16 MiB, which is what node 24 grows it to under steady
 * traffic (its default maximum), and no memory reducer, which only acts on a process it judges idle.
 */
const STEADY_HEAP_FLAGS = ['--min-semi-space-size=16', '--max-semi-space-size=16', '--no-memory-reducer'];
const run = { workDir, perfMaps: PARTS, nodeFlags: STEADY_HEAP_FLAGS };

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
const primaryPerRequest = new Map<string, number>();
const partsOf = new Map<string, InstructionParts>();
/** `target|scenario` → instructions per request by `<part>\t<function>` (with --parts). */
const functionsOf = new Map<string, Map<string, number>>();
for (const target of targets) {
  process.stderr.write(`bench:instructions: ${target.name}: counting ${target.processes.map(({ role, pid }) => `its ${role}, pid ${pid}`).join('; ')}\n`);
}
await Promise.all(
  targets.map(async (target) => {
    // Every scenario warms up before any is counted, so no count holds the JIT still compiling for the next one.
    for (const scenario of SCENARIOS) await drive(target, scenario, WARMUP);
    for (const scenario of SCENARIOS) {
      const [serving, primary] = await target.count(() => drive(target, scenario, REQUESTS));
      const key = `${target.name}|${scenario.label}`;
      perRequest.set(key, serving! / REQUESTS);
      if (primary !== undefined) primaryPerRequest.set(key, primary / REQUESTS);
      // Far below any proxy's count: the process counted is not the one that answered.
      if (serving! / REQUESTS < IDLE_PER_REQUEST) fail(`${target.name}: its ${target.processes[0]!.role} (pid ${target.processes[0]!.pid}) counted ${(serving! / REQUESTS).toFixed(0)} instructions per request: it served no request`);
      if (PARTS) {
        const byFunction = new Map<string, number>();
        partsOf.set(key, partsPerRequest(target.files, REQUESTS, byFunction));
        functionsOf.set(key, byFunction);
      }
      const share = primary === undefined ? '' : ` (+ ${(primary / REQUESTS / 1e3).toFixed(0)} k in its primary)`;
      process.stderr.write(`${target.name.padEnd(9)} ${scenario.label.padEnd(20)} ${(serving! / REQUESTS / 1e6).toFixed(3)} M instructions per request${share}\n`);
    }
  }),
);

// The log file got a line per request from the process counted (the batching destination flushes within about a second).
const served = SCENARIOS.length * (WARMUP + REQUESTS);
const logged = new Map<string, number>();
for (const target of targets) {
  for (let waited = 0; target.name !== LOG_OFF && (target.logLines() ?? served) < served && waited < 10_000; waited += 250) await sleep(250);
  if (target.name === LOG_OFF) continue;
  const lines = target.logLines();
  if (lines === null) continue;
  logged.set(target.name, lines);
  if (lines < served) fail(`${target.name}: its ${target.processes[0]!.role} (pid ${target.processes[0]!.pid}, the process counted) wrote ${lines} request log lines for ${served} requests`);
}
const gatewaySetup = describeGatewaySetup({ route: ROUTE, routingModel: ROUTING_MODEL, served, logged, targets });
const settings = ['BENCH_INSTR_WARMUP', 'BENCH_INSTR_REQUESTS', 'BENCH_INSTR_ROUTE']
  .filter((name) => process.env[name])
  .map((name) => `${name}=${process.env[name]} `)
  .join('');
const common = { machine, settings, warmup: WARMUP, requests: REQUESTS, connections: CONNECTIONS, scenarios: SCENARIOS, perRequest, primaryPerRequest, gatewaySetup, wallMinutes: () => (Date.now() - started) / 60_000 };
if (sink) report('TRACING', tracingBlock(common, sink));
if (PARTS) report('PARTS', partsBlock(common, partsOf, functionsOf));
if (PIECES || AGAINST !== undefined) report('PIECES', piecesBlock(common, PIECES ? { pieces: [LOG_OFF, NO_CALLERS], logOff: LOG_OFF, noCallers: NO_CALLERS } : { against: AGAINST!, others: AGAINST_DIRS.map(baseline) }));
report('INSTRUCTIONS', instructionsBlock(common));

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
