// `npm run bench` (issue 5): the built gateway (dist/, as ops run it) side by side with a raw Node
// pass-through proxy, and with that proxy calling its upstream through got (the floor for a gateway that keeps
// got), all in front of the same fast local mock provider, under the same autocannon load.
//
// Every party is its own process: the mock provider, the gateway (`node dist/server.js`, default
// configuration: logs at info on a pipe this process drains, metrics on), the two proxies, and the load
// generator (autocannon plus a sequential client for time to first event). This process only starts them,
// sends commands and writes the report, so the CPU time /proc gives for a target is that target's alone.
//
//   npm run bench                       the comparison (about 9 minutes with the defaults); writes BENCHMARKS.md
//   npm run bench:quick                 1 round of 3 s, prints only
//   npm run bench -- --soak-memory      steady mixed load on the gateway, RSS every 5 s; writes BENCHMARKS.md
//
// Environment: BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (3), BENCH_ROUNDS (3), BENCH_CONNECTIONS (32),
// BENCH_TTFE_REQUESTS (200), BENCH_MAX_OTHER_CPU (15, % of a core used by processes outside the bench above
// which a run is made again) and BENCH_RETRIES (2), BENCH_PIN (on|off, default on: targets on CPU 0, everything else on the other
// CPUs), BENCH_MEMORY_SECONDS (300; setting it also selects the memory mode), BENCH_MEMORY_WARMUP_SECONDS (30).
// Flags: --quick, --soak-memory[=seconds], --no-write. Loopback only; every child is killed on the way out.
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Command, LoadCommand, LoadResult, Reply, SequentialCommand, SequentialResult, SequentialResults } from './bench-protocol.js';
import { announcedOrigin, bareEnv, killAll, killAllOnExit, onStop, portMessage, track, whenReady } from './children.js';
import { median, rssBytes } from './proc-stats.js';
import {
  BENCHMARKS_MD,
  describeMachine as machineLines,
  ensureBuilt,
  packageVersion,
  readBlock,
  REPO,
  SERVER,
  transpile as transpileInto,
  writeBlock as writeReportBlock,
} from './report.js';

const HERE = fileURLToPath(new URL('./', import.meta.url));

// ---------------------------------------------------------------------------------------------- settings

const argv = process.argv.slice(2);
const flag = (name: string) => argv.some((arg) => arg === name || arg.startsWith(`${name}=`));
const flagValue = (name: string) => argv.find((arg) => arg.startsWith(`${name}=`))?.slice(name.length + 1);
for (const arg of argv) {
  if (!/^--(quick|no-write|soak-memory(=\d+)?)$/.test(arg)) {
    process.stderr.write(`bench: unknown argument ${arg} (known: --quick, --no-write, --soak-memory[=seconds])\n`);
    process.exit(2);
  }
}

function envNumber(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    process.stderr.write(`bench: ${name} must be a number in ${min}..${max}, got ${raw}\n`);
    process.exit(2);
  }
  return value;
}

const QUICK = flag('--quick');
const SOAK = flag('--soak-memory') || (process.env['BENCH_MEMORY_SECONDS'] ?? '') !== '';
const WRITE = !flag('--no-write') && !QUICK;
const SECONDS = envNumber('BENCH_SECONDS', QUICK ? 3 : 10, 1, 600);
const WARMUP_SECONDS = envNumber('BENCH_WARMUP_SECONDS', QUICK ? 1 : 3, 0, 600);
const ROUNDS = Math.round(envNumber('BENCH_ROUNDS', QUICK ? 1 : 3, 1, 50));
const CONNECTIONS = Math.round(envNumber('BENCH_CONNECTIONS', 32, 1, 1024));
const TTFE_REQUESTS = Math.round(envNumber('BENCH_TTFE_REQUESTS', QUICK ? 50 : 200, 10, 100_000));
const TTFE_WARMUP = 20;
const MEMORY_SECONDS = Number(flagValue('--soak-memory') ?? envNumber('BENCH_MEMORY_SECONDS', 300, 10, 24 * 3600));
const MEMORY_WARMUP_SECONDS = envNumber('BENCH_MEMORY_WARMUP_SECONDS', 30, 0, 3600);
const MEMORY_SAMPLE_SECONDS = 5;
const MAX_OTHER_CPU = envNumber('BENCH_MAX_OTHER_CPU', 15, 0, 10_000) / 100;
const RETRIES = Math.round(envNumber('BENCH_RETRIES', QUICK ? 0 : 2, 0, 10));
const PIN = (process.env['BENCH_PIN'] ?? 'on') !== 'off' && os.cpus().length >= 2 && hasTaskset();

const ROUTING_MODEL = 'local/llama3.2';
const UPSTREAM_MODEL = 'llama3.2';
const MESSAGES = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'Say hello in one short sentence.' },
];

interface Scenario {
  readonly id: string;
  readonly label: string;
  /** Chunk events per stream (before [DONE]); null: not streamed. */
  readonly events: number | null;
  readonly body: string;
}

function requestBody(events: number | null): string {
  // max_tokens is forwarded untouched by every target; the mock streams that many events.
  return JSON.stringify(events === null ? { model: ROUTING_MODEL, messages: MESSAGES, max_tokens: 64 } : { model: ROUTING_MODEL, messages: MESSAGES, stream: true, max_tokens: events });
}

const SCENARIOS: readonly Scenario[] = [
  { id: 'json', label: 'non-streamed', events: null, body: requestBody(null) },
  { id: 'sse20', label: 'streamed, 20 events', events: 20, body: requestBody(20) },
  { id: 'sse1000', label: 'streamed, 1,000 events', events: 1000, body: requestBody(1000) },
];

// ---------------------------------------------------------------------------------------------- children

let tmpDir: string | undefined;

killAllOnExit('bench');
process.on('uncaughtException', (error) => fatal(error));
process.on('unhandledRejection', (error) => fatal(error));

function fatal(error: unknown): never {
  process.stderr.write(`\nbench: FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  killAll();
  process.exit(1);
}

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Pins every thread of a process (taskset -a). Threads started later inherit it. */
function pin(pid: number, cpus: string): void {
  if (PIN) execFileSync('taskset', ['-a', '-c', '-p', cpus, String(pid)], { stdio: 'ignore' });
}
const TARGET_CPUS = '0';
const OTHER_CPUS = `1-${os.cpus().length - 1}`;

/** Transpiles a standalone TypeScript file into this run's temporary folder, inside node_modules so `got` resolves. */
function transpile(file: string): string {
  if (!tmpDir) {
    mkdirSync(join(REPO, 'node_modules', '.cache'), { recursive: true });
    const dir = mkdtempSync(join(REPO, 'node_modules', '.cache', 'gateway-bench-'));
    onStop(() => rmSync(dir, { recursive: true, force: true }));
    tmpDir = dir;
  }
  return transpileInto(file, tmpDir);
}

interface Target {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  /** The model every answer must carry. */
  readonly model: string;
}

async function startForked(file: string, what: string, env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const child = track(fork(transpile(file), [], { cwd: REPO, execArgv: [], env: bareEnv(env), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  return { child, port: await whenReady(child, what, portMessage(child)) };
}

interface Gateway extends Target {
  readonly origin: string;
  logLines(): number;
  stop(): Promise<void>;
}

/** `node dist/server.js` with nothing set but where the provider is: info logs on stdout (drained here), metrics on. */
async function startGateway(mockPort: number): Promise<Gateway> {
  const child = track(
    spawn(process.execPath, [SERVER], {
      cwd: REPO,
      env: bareEnv({ LOCAL_LLM_BASE_URL: `http://127.0.0.1:${mockPort}/v1`, PORT: '0', HOST: '127.0.0.1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let lines = 0;
  let stderrTail = '';
  let stopping = false;
  child.stderr!.on('data', (piece: Buffer) => (stderrTail = (stderrTail + piece.toString()).slice(-4000)));
  // The log is drained as ops would ship it: read and counted, never kept.
  child.stdout!.on('data', (piece: Buffer) => {
    for (let at = piece.indexOf(10); at !== -1; at = piece.indexOf(10, at + 1)) lines++;
  });
  const origin = await whenReady(child, 'the gateway', announcedOrigin(child.stdout!), 30_000, () => `:\n${stderrTail}`);
  child.once('exit', (code, signal) => {
    if (!stopping) fatal(new Error(`the gateway exited during the bench (${String(signal ?? code)}):\n${stderrTail}`));
  });
  return {
    name: 'gateway',
    origin,
    url: `${origin}/v1/chat/completions`,
    pid: child.pid!,
    model: ROUTING_MODEL,
    logLines: () => lines,
    async stop() {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

interface LoadGenerator {
  readonly pid: number;
  send(command: LoadCommand, timeoutMs: number): Promise<LoadResult>;
  send(command: SequentialCommand, timeoutMs: number): Promise<SequentialResults>;
}

async function startLoadGenerator(): Promise<LoadGenerator> {
  const child = track(fork(join(HERE, 'load-generator.ts'), [], { cwd: REPO, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  await whenReady(child, 'the load generator', once(child, 'message'));
  let nextId = 1;
  const pending = new Map<number, { resolve: (value: LoadResult | SequentialResults) => void; reject: (error: Error) => void }>();
  child.on('message', (reply: Reply) => {
    const waiter = pending.get(reply.id);
    if (!waiter) return;
    pending.delete(reply.id);
    if (reply.ok) waiter.resolve(reply.result);
    else waiter.reject(new Error(reply.error));
  });
  child.once('exit', (code, signal) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`the load generator exited (${String(signal ?? code)})`));
    pending.clear();
  });
  function send(command: LoadCommand | SequentialCommand, timeoutMs: number): Promise<LoadResult | SequentialResults> {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`the load generator did not answer ${command.type} within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, {
        resolve: (value) => (clearTimeout(timer), resolve(value)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
      child.send({ ...command, id } satisfies Command);
    });
  }
  return { pid: child.pid!, send: send as LoadGenerator['send'] };
}

// ---------------------------------------------------------------------------------------------- formatting

const mib = (bytes: number) => bytes / 1024 / 1024;
const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—');
const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : '—');
const ms = (n: number) => fixed(n, n < 10 ? 2 : 1);

function describeMachine(): string[] {
  return machineLines(`autocannon ${packageVersion('autocannon')}`);
}

function writeBlock(name: string, content: string): void {
  writeReportBlock(name, content, TEMPLATE);
}

function commandLine(): string {
  const settings = Object.keys(process.env)
    .filter((name) => name.startsWith('BENCH_'))
    .sort()
    .map((name) => `${name}=${process.env[name]}`);
  const npm = process.env['npm_lifecycle_event'];
  const base = npm === 'bench' || npm === 'bench:quick' ? `npm run ${npm}` : 'npx tsx scripts/bench/bench.ts';
  const args = npm === 'bench:quick' ? argv.filter((arg) => arg !== '--quick') : argv;
  return [...settings, base, ...(args.length ? (npm ? ['--', ...args] : args) : [])].join(' ');
}

const TEMPLATE = `# Benchmarks

The gateway's own cost per request, measured side by side with the thinnest possible Node proxy, as issue 5
asks. \`npm run bench\` rewrites the figures below (the blocks between \`BENCH:…\` markers); everything else in
this file is kept as written.

## Budget (issue 5)

- **CPU per request** of the gateway process at most **2×** the raw proxy's, for non-streamed requests and for
  20-event streams.
- **Time to first streamed event** (p50) at most **0.5 ms** above the raw proxy's.
- **Flat memory**: RSS flat after warm-up during a 5-minute run at steady load.

The gateway is measured as ops run it: \`node dist/server.js\` with its default configuration (request log at
\`info\` on stdout, metrics on, \`stream_usage\` on), \`LOCAL_LLM_BASE_URL\` pointing at the mock provider.

<!-- BENCH:MAIN:BEGIN -->
(no run yet: \`npm run build && npm run bench\`)
<!-- BENCH:MAIN:END -->

<!-- BENCH:MEMORY:BEGIN -->
(no run yet: \`npm run build && npm run bench -- --soak-memory\`)
<!-- BENCH:MEMORY:END -->

<!-- BENCH:METHOD:BEGIN -->
<!-- BENCH:METHOD:END -->

## Optimisations

<!-- OPTIMISATIONS -->
`;

const METHOD = `## Method

- **Processes.** Each party runs in its own process, so the CPU time that \`/proc/<pid>/stat\` gives (user +
  system, all threads, 10 ms ticks) is one target's alone: the mock provider, the gateway, the raw and got proxies,
  the load generator, and the orchestrator (\`scripts/bench/bench.ts\`), which only starts them, drains the
  gateway's log pipe and writes the report. With \`BENCH_PIN=on\` (the default on 2+ cores) the target under
  load runs on CPU 0 and everything else on the other CPUs (\`taskset -a\`), so a target never shares its core
  with the load generator or the provider.
- **Mock provider** (\`bench-mock-provider.ts\`): node:http, keep-alive, precomputed buffers. Non-streamed: a
  fixed 345-byte \`chat.completion\`. Streamed: \`max_tokens\` chunk events plus \`data: [DONE]\`, written at once;
  as OpenAI does, a request asking for usage (the gateway does so by default, \`stream_usage\`) gets
  \`"usage":null\` in every chunk and a usage chunk, which the gateway hides from the caller.
- **Raw proxy** (\`raw-proxy.ts\`): node:http server, one keep-alive \`http.Agent\` to the mock, caller's method,
  path and headers passed as they are, request and response piped, nothing parsed or rewritten; a 502 on an
  upstream error, the upstream request aborted when the caller leaves. Transpiled to plain JavaScript and run
  with \`node\`, like \`dist/\`.
- **got proxy** (\`got-proxy.ts\`): the raw proxy with its upstream call made by \`got.stream\`, configured as the
  gateway configures got (every fixed option in \`got.extend\` at start-up, timeouts included). Nothing else
  differs, so *got proxy ÷ raw* is got's own cost: the least a gateway that keeps got can reach.
- **Load**: autocannon (programmatic, in \`load-generator.ts\`), a fixed number of keep-alive connections each
  sending its next request as soon as the previous answer is complete, a warm-up, then the measured window.
  CPU µs per request = the target's CPU time over the window ÷ answers completed in it. Latency is per
  answer, to its last byte. Every answer is checked in passing (the \`model\` the caller must see, a stream's
  first event and final \`[DONE]\`); any error, timeout, non-2xx or failed check fails the run.
- **Time to first event (TTFE)**: with no other load, one request at a time over one keep-alive connection per
  target, alternating between the targets (so anything else happening on the machine hits them alike), the time from sending the request to the first body byte of the first \`data:\` event (for
  non-streamed answers: the first body byte). These answers are checked in full: every chunk's \`model\`, the
  number of events, no \`usage\` the caller did not ask for, \`[DONE]\` last.
- **Rounds**: every round runs each scenario on every target in turn (the order alternates), so drift on the
  machine hits them all; figures are the median over the rounds (CPU per request also shows the rounds' range).
  *Other CPU* is the machine's busy time (\`/proc/stat\`) during a measured window not spent by any bench
  process. A run during which it exceeds \`BENCH_MAX_OTHER_CPU\` (15% of a core) is made again, up to
  \`BENCH_RETRIES\` (2) times, and the quietest attempt is kept.
- **Memory** (\`npm run bench -- --soak-memory\`): the gateway alone under the same load generator, each
  connection sending in turn non-streamed, 20-event, non-streamed, 20-event and 1,000-event requests, for
  \`BENCH_MEMORY_WARMUP_SECONDS\` (30) + \`BENCH_MEMORY_SECONDS\` (300); RSS from \`/proc\` and V8 heap used from
  \`/metrics\` every 5 s.
- **Settings**: \`BENCH_SECONDS\` (10), \`BENCH_WARMUP_SECONDS\` (3), \`BENCH_ROUNDS\` (3), \`BENCH_CONNECTIONS\` (32),
  \`BENCH_TTFE_REQUESTS\` (200), \`BENCH_PIN\` (\`on\`/\`off\`). \`npm run bench:quick\` (1 round of 1 + 3 s, no
  repeats) prints without writing this file. \`npm run build\` first: the bench measures \`dist/\` as it is.
`;

// ---------------------------------------------------------------------------------------------- comparison

interface Sample {
  readonly load: LoadResult;
  readonly sequential: SequentialResult;
  readonly rss: number;
}

interface Summary {
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

function cpuPerRequestOf(load: LoadResult): number {
  return ((load.targetCpuTicks / load.ticksPerSecond) * 1e6) / load.requests;
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

async function comparison(): Promise<void> {
  const started = Date.now();
  const machine = describeMachine();
  const perRun = WARMUP_SECONDS + SECONDS;
  const estimate = ROUNDS * SCENARIOS.length * 3 * (perRun + 3) + 15;
  process.stderr.write(
    `bench: ${ROUNDS} round(s) × ${SCENARIOS.length} scenarios × 3 targets, ${WARMUP_SECONDS} s warm-up + ${SECONDS} s measured at ${CONNECTIONS} connections, ` +
      `${TTFE_REQUESTS} sequential requests for TTFE; pinning ${PIN ? `on (targets on CPU ${TARGET_CPUS}, the rest on ${OTHER_CPUS})` : 'off'}; about ${Math.ceil(estimate / 60)} min (more if runs are made again)\n`,
  );
  // Bounded even if every run had to be made again.
  const limitSeconds = estimate * (RETRIES + 2) + 120;
  setTimeout(() => fatal(new Error(`over the time limit (${Math.ceil(limitSeconds / 60)} min)`)), limitSeconds * 1000).unref();

  const mock = await startForked('bench-mock-provider.ts', 'the mock provider', {});
  const raw = await startForked('raw-proxy.ts', 'the raw proxy', { UPSTREAM_PORT: String(mock.port) });
  const gotProxy = await startForked('got-proxy.ts', 'the got proxy', { UPSTREAM_PORT: String(mock.port) });
  const gateway = await startGateway(mock.port);
  const loader = await startLoadGenerator();
  pin(mock.child.pid!, OTHER_CPUS);
  pin(loader.pid, OTHER_CPUS);
  pin(process.pid, OTHER_CPUS);
  pin(gateway.pid, TARGET_CPUS);
  pin(raw.child.pid!, TARGET_CPUS);
  pin(gotProxy.child.pid!, TARGET_CPUS);
  const targets: readonly Target[] = [
    gateway,
    { name: 'raw proxy', url: `http://127.0.0.1:${raw.port}/v1/chat/completions`, pid: raw.child.pid!, model: UPSTREAM_MODEL },
    { name: 'got proxy', url: `http://127.0.0.1:${gotProxy.port}/v1/chat/completions`, pid: gotProxy.child.pid!, model: UPSTREAM_MODEL },
  ];
  const benchPids = [process.pid, mock.child.pid!, raw.child.pid!, gotProxy.child.pid!, gateway.pid, loader.pid];
  process.stderr.write(
    `bench: mock provider pid ${mock.child.pid}, gateway pid ${gateway.pid} (${gateway.origin}), raw proxy pid ${raw.child.pid}, got proxy pid ${gotProxy.child.pid}, load generator pid ${loader.pid}\n`,
  );

  const samples = new Map<string, Sample[]>();
  let foreignMax = 0;
  let repeated = 0;
  let loadSideMax = 0;
  let gatewayAnswers = 0;
  const busyOf = (ticks: number, ticksPerSecond: number, elapsedMs: number) => ticks / ticksPerSecond / (elapsedMs / 1000);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [index, scenario] of SCENARIOS.entries()) {
      const order = (round + index) % 2 === 1 ? targets : [...targets].reverse();
      const loads = new Map<Target, LoadResult>();
      for (const target of order) {
        // A run during which something outside the bench took more than BENCH_MAX_OTHER_CPU of a core is made
        // again (up to BENCH_RETRIES times); the run with the least outside CPU is kept.
        let load: LoadResult | undefined;
        let foreign = Number.POSITIVE_INFINITY;
        for (let attempt = 0; attempt <= RETRIES; attempt++) {
          const attemptLoad = await loader.send(
            { type: 'load', url: target.url, bodies: [scenario.body], connections: CONNECTIONS, warmupSeconds: attempt === 0 ? WARMUP_SECONDS : 1, seconds: SECONDS, targetPid: target.pid, benchPids, expect: { model: target.model }, keepLatencies: true },
            (perRun + 60) * 1000,
          );
          const p = attemptLoad.problems;
          if (p.errors + p.timeouts + p.non2xx + p.mismatches > 0) {
            throw new Error(`${target.name}, ${scenario.label}: ${p.errors} errors, ${p.timeouts} timeouts, ${p.non2xx} non-2xx, ${p.mismatches} failed checks${p.sample ? `; first failed answer: ${p.sample}` : ''}`);
          }
          if (attemptLoad.requests === 0) throw new Error(`${target.name}, ${scenario.label}: no answer in ${SECONDS} s`);
          if (target === gateway) gatewayAnswers += attemptLoad.warmupRequests + attemptLoad.requests;
          const attemptForeign = busyOf(attemptLoad.foreignCpuTicks, attemptLoad.ticksPerSecond, attemptLoad.elapsedMs);
          if (attemptForeign < foreign) [load, foreign] = [attemptLoad, attemptForeign];
          if (attemptForeign <= MAX_OTHER_CPU) break;
          if (attempt < RETRIES) {
            repeated++;
            process.stderr.write(`[round ${round}/${ROUNDS}] ${scenario.label} ${target.name}: other processes used ${(attemptForeign * 100).toFixed(0)}% of a core (> ${(MAX_OTHER_CPU * 100).toFixed(0)}%), again\n`);
          }
        }
        if (!load) throw new Error('unreachable: no run');
        foreignMax = Math.max(foreignMax, foreign);
        const loadSide = busyOf(load.loadSideCpuTicks, load.ticksPerSecond, load.elapsedMs);
        loadSideMax = Math.max(loadSideMax, loadSide);
        loads.set(target, load);
        process.stderr.write(
          `[round ${round}/${ROUNDS}] ${scenario.label.padEnd(22)} ${target.name.padEnd(9)} ${int((load.requests / load.elapsedMs) * 1000).padStart(6)} req/s, ` +
            `CPU ${fixed(cpuPerRequestOf(load), 0).padStart(5)} µs/req, p50 ${ms(load.latencyP50Ms)} ms, target busy ${fixed(busyOf(load.targetCpuTicks, load.ticksPerSecond, load.elapsedMs) * 100, 0)}%, load side ${fixed(loadSide * 100, 0)}%` +
            `${foreign > 0.05 ? `, other CPU ${(foreign * 100).toFixed(0)}% of a core` : ''}\n`,
        );
      }

      // Time to first event: every target, requests alternating, no other load; made again like a load run when disturbed.
      let sequential: SequentialResults | undefined;
      let sequentialForeign = Number.POSITIVE_INFINITY;
      for (let attempt = 0; attempt <= RETRIES; attempt++) {
        const attemptSequential = await loader.send(
          { type: 'sequential', targets: targets.map((t) => ({ url: t.url, expect: { model: t.model } })), body: scenario.body, warmup: TTFE_WARMUP, count: TTFE_REQUESTS, events: scenario.events, benchPids },
          300_000,
        );
        gatewayAnswers += TTFE_WARMUP + TTFE_REQUESTS;
        const attemptForeign = busyOf(attemptSequential.foreignCpuTicks, attemptSequential.ticksPerSecond, attemptSequential.elapsedMs);
        if (attemptForeign < sequentialForeign) [sequential, sequentialForeign] = [attemptSequential, attemptForeign];
        if (attemptForeign <= MAX_OTHER_CPU) break;
        if (attempt < RETRIES) {
          repeated++;
          process.stderr.write(`[round ${round}/${ROUNDS}] ${scenario.label} TTFE: other processes used ${(attemptForeign * 100).toFixed(0)}% of a core (> ${(MAX_OTHER_CPU * 100).toFixed(0)}%), again\n`);
        }
      }
      if (!sequential) throw new Error('unreachable: no sequential run');
      foreignMax = Math.max(foreignMax, sequentialForeign);
      for (const [t, target] of targets.entries()) {
        const rss = rssBytes(target.pid);
        const key = `${scenario.id}:${target.name}`;
        samples.set(key, [...(samples.get(key) ?? []), { load: loads.get(target)!, sequential: sequential.perTarget[t]!, rss }]);
      }
      process.stderr.write(
        `[round ${round}/${ROUNDS}] ${scenario.label.padEnd(22)} ${scenario.events === null ? 'first byte' : 'TTFE'} p50 ${targets.map((t, i) => `${t.name} ${ms(sequential.perTarget[i]!.firstByteP50Ms)} ms`).join(', ')}` +
          `${sequentialForeign > 0.05 ? `, other CPU ${(sequentialForeign * 100).toFixed(0)}% of a core` : ''}\n`,
      );
    }
  }

  // Logs and metrics were on: the request log has a line per answer, /metrics counted them.
  await sleep(500);
  const logLines = gateway.logLines();
  const metricsText = await (await fetch(`${gateway.origin}/metrics`)).text();
  const counted = metricsText
    .split('\n')
    .filter((line) => line.startsWith('gateway_requests_total{'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  if (logLines < gatewayAnswers * 0.99) throw new Error(`the gateway logged ${logLines} lines for ${gatewayAnswers} answers: is the request log on?`);
  if (counted < gatewayAnswers * 0.99) throw new Error(`gateway_requests_total is ${counted} for ${gatewayAnswers} answers: are metrics on?`);

  await gateway.stop();
  const elapsedMin = (Date.now() - started) / 60_000;

  // ---- report
  const summaries = new Map<string, Summary>();
  for (const [key, list] of samples) summaries.set(key, summarise(list));
  const get = (scenario: Scenario, target: string) => summaries.get(`${scenario.id}:${target}`)!;

  const table: string[] = [
    '| Scenario | Target | req/s | latency p50 / p99 (ms) | CPU µs per request (rounds) | target CPU busy | TTFE p50 / p99 (ms) | RSS at end (MiB) |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const scenario of SCENARIOS) {
    const gw = get(scenario, 'gateway');
    const rp = get(scenario, 'raw proxy');
    const gp = get(scenario, 'got proxy');
    for (const [name, s] of [['gateway', gw], ['raw proxy', rp], ['got proxy', gp]] as const) {
      const range = ROUNDS > 1 ? ` (${fixed(s.cpuPerRequestMin, 0)}–${fixed(s.cpuPerRequestMax, 0)})` : '';
      const ttfe = `${scenario.events === null ? '(' : ''}${ms(s.ttfeP50)} / ${ms(s.ttfeP99)}${scenario.events === null ? ')' : ''}`;
      table.push(`| ${scenario.label} | ${name} | ${int(s.rps)} | ${ms(s.p50)} / ${ms(s.p99)} | **${fixed(s.cpuPerRequest, 0)}**${range} | ${(s.busy * 100).toFixed(0)}% | ${ttfe} | ${mib(s.rss).toFixed(0)} |`);
    }
    table.push(`| ${scenario.label} | **gateway ÷ raw** | ${fixed(gw.rps / rp.rps, 2)}× | | **${fixed(gw.cpuPerRequest / rp.cpuPerRequest, 2)}×** | | ${scenario.events === null ? '' : `**${signed(gw.ttfeP50 - rp.ttfeP50)} ms** (p50)`} | |`);
    table.push(`| ${scenario.label} | got proxy ÷ raw | ${fixed(gp.rps / rp.rps, 2)}× | | ${fixed(gp.cpuPerRequest / rp.cpuPerRequest, 2)}× | | ${scenario.events === null ? '' : `${signed(gp.ttfeP50 - rp.ttfeP50)} ms (p50)`} | |`);
  }

  const budget: string[] = ['| Budget | Scenario | Gateway | Raw proxy | Limit | Verdict |', '|---|---|---:|---:|---:|---|'];
  for (const scenario of SCENARIOS.filter((s) => s.id !== 'sse1000')) {
    const gw = get(scenario, 'gateway');
    const rp = get(scenario, 'raw proxy');
    const limit = 2 * rp.cpuPerRequest;
    const ratio = gw.cpuPerRequest / rp.cpuPerRequest;
    const verdict = gw.cpuPerRequest <= limit ? `met (${fixed(ratio, 2)}×, ${fixed(limit - gw.cpuPerRequest, 0)} µs to spare)` : `**not met**: ${fixed(ratio, 2)}×, ${fixed(gw.cpuPerRequest - limit, 0)} µs per request over`;
    budget.push(`| CPU per request ≤ 2× raw | ${scenario.label} | ${fixed(gw.cpuPerRequest, 0)} µs | ${fixed(rp.cpuPerRequest, 0)} µs | ≤ ${fixed(limit, 0)} µs | ${verdict} |`);
  }
  for (const scenario of SCENARIOS.filter((s) => s.events !== null)) {
    const gw = get(scenario, 'gateway');
    const rp = get(scenario, 'raw proxy');
    const limit = rp.ttfeP50 + 0.5;
    const delta = gw.ttfeP50 - rp.ttfeP50;
    const verdict = gw.ttfeP50 <= limit ? `met (${signed(delta)} ms)` : `**not met**: ${signed(delta)} ms, ${fixed(gw.ttfeP50 - limit, 2)} ms over`;
    budget.push(`| TTFE p50 ≤ raw + 0.5 ms | ${scenario.label} | ${ms(gw.ttfeP50)} ms | ${ms(rp.ttfeP50)} ms | ≤ ${ms(limit)} ms | ${verdict} |`);
  }
  const memoryVerdict = /\*\*Verdict\*\*: ([^\n]*)/.exec(readBlock('MEMORY') ?? '')?.[1];
  budget.push(`| Flat memory | 5-minute soak | | | see [Memory](#memory-at-steady-load) | ${memoryVerdict ?? 'not measured yet (`npm run bench -- --soak-memory`)'} |`);

  const sse1000 = SCENARIOS.find((s) => s.id === 'sse1000')!;
  const sse20 = SCENARIOS.find((s) => s.id === 'sse20')!;
  const perEvent = (target: string) => get(sse1000, target).cpuPerRequest / ((sse1000.events ?? 0) + 1);
  const notes = [
    `- ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${SECONDS} s measured per target and scenario, ${ROUNDS} round(s); medians over the rounds. ` +
      `TTFE: ${TTFE_REQUESTS} sequential requests per target (after ${TTFE_WARMUP}), alternating between the targets, per scenario and round; for non-streamed answers (in parentheses) the time to the first body byte.`,
    `- Pinning ${PIN ? `on: the target under load on CPU ${TARGET_CPUS}; the load generator, the mock provider and the orchestrator on CPU ${OTHER_CPUS}` : 'off'}. ` +
      `*target CPU busy* is the target's CPU time ÷ wall time in the window (100% = one core): below 100% the target was waiting for the load generator or the provider, and its req/s is a floor. ` +
      `The load side (load generator + mock provider + orchestrator) used at most ${(loadSideMax * 100).toFixed(0)}% of a core${PIN ? ` on its ${os.cpus().length - 1} CPU(s)` : ''}.`,
    `- The floor with got: the got proxy spends ${SCENARIOS.filter((s) => s.id !== 'sse1000')
      .map((s) => `${fixed(get(s, 'got proxy').cpuPerRequest / get(s, 'raw proxy').cpuPerRequest, 2)}× the raw proxy's CPU (${s.label})`)
      .join(', ')} and adds ${signed(get(sse20, 'got proxy').ttfeP50 - get(sse20, 'raw proxy').ttfeP50)} ms to its TTFE (20 events): ` +
      `where these pass the budget, no gateway that keeps got can meet it.`,
    `- 1,000-event streams per event (÷ 1,001 events with [DONE]): gateway ${fixed(perEvent('gateway'), 2)} µs, raw proxy ${fixed(perEvent('raw proxy'), 2)} µs.`,
    `- Every answer was checked; no error, timeout, non-2xx or failed check. The gateway wrote ${int(logLines)} log lines and counted ${int(counted)} requests in \`gateway_requests_total\` for ${int(gatewayAnswers)} answers (logs and metrics on).`,
    `- Other CPU on the machine during the measured windows kept: at most ${(foreignMax * 100).toFixed(0)}% of a core${foreignMax > MAX_OTHER_CPU ? ' — **something else was running; these figures are noisier than usual**' : ''}; ` +
      `${repeated} run(s) made again because other processes used more than ${(MAX_OTHER_CPU * 100).toFixed(0)}% of a core (up to ${RETRIES} repeats, the quietest kept).`,
    `- Wall time ${elapsedMin.toFixed(1)} min.`,
  ];

  const markdown = [
    '## Latest run: gateway vs raw proxy',
    '',
    ...machine,
    `- Command: \`${commandLine()}\``,
    '',
    ...table,
    '',
    ...budget,
    '',
    ...notes,
  ].join('\n');
  process.stdout.write(`\n${markdown}\n`);
  if (WRITE) {
    writeBlock('MAIN', markdown);
    writeBlock('METHOD', METHOD);
    process.stderr.write(`bench: wrote ${BENCHMARKS_MD}\n`);
  }
}

function signed(n: number): string {
  return `${n >= 0 ? '+' : '−'}${Math.abs(n).toFixed(2)}`;
}

// ---------------------------------------------------------------------------------------------- memory soak

async function memorySoak(): Promise<void> {
  const started = Date.now();
  const machine = describeMachine();
  const total = MEMORY_WARMUP_SECONDS + MEMORY_SECONDS;
  process.stderr.write(`bench: memory soak, ${MEMORY_WARMUP_SECONDS} s warm-up + ${MEMORY_SECONDS} s at ${CONNECTIONS} connections (mixed requests), RSS every ${MEMORY_SAMPLE_SECONDS} s\n`);
  setTimeout(() => fatal(new Error('over the time limit')), (total + 180) * 1000).unref();

  const mock = await startForked('bench-mock-provider.ts', 'the mock provider', {});
  const gateway = await startGateway(mock.port);
  const loader = await startLoadGenerator();
  pin(mock.child.pid!, OTHER_CPUS);
  pin(loader.pid, OTHER_CPUS);
  pin(process.pid, OTHER_CPUS);
  pin(gateway.pid, TARGET_CPUS);
  const benchPids = [process.pid, mock.child.pid!, gateway.pid, loader.pid];

  await sleep(1000);
  const idleRss = rssBytes(gateway.pid);
  // Per connection, in turn: non-streamed, 20 events, non-streamed, 20 events, 1,000 events.
  const mix = [SCENARIOS[0]!, SCENARIOS[1]!, SCENARIOS[0]!, SCENARIOS[1]!, SCENARIOS[2]!].map((s) => s.body);
  const loadStarted = performance.now();
  const run = loader.send(
    { type: 'load', url: `${gateway.origin}/v1/chat/completions`, bodies: mix, connections: CONNECTIONS, warmupSeconds: 0, seconds: total, targetPid: gateway.pid, benchPids, expect: { model: ROUTING_MODEL }, keepLatencies: false },
    (total + 60) * 1000,
  );
  interface MemorySample {
    readonly t: number;
    readonly rss: number;
    readonly heap: number;
  }
  const series: MemorySample[] = [];
  const heapUsed = async () => {
    const text = await (await fetch(`${gateway.origin}/metrics`)).text();
    return Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
  };
  let done = false;
  void run.finally(() => (done = true)).catch(() => {});
  for (let k = 0; k * MEMORY_SAMPLE_SECONDS <= total && !done; k++) {
    const wait = loadStarted + k * MEMORY_SAMPLE_SECONDS * 1000 - performance.now();
    if (wait > 0) await Promise.race([sleep(wait), run.catch(() => {})]);
    if (done) break;
    const t = k * MEMORY_SAMPLE_SECONDS;
    const sample = { t, rss: rssBytes(gateway.pid), heap: await heapUsed() };
    series.push(sample);
    if (t % 30 === 0) process.stderr.write(`[${String(t).padStart(4)} s] gateway RSS ${mib(sample.rss).toFixed(1)} MiB, heap used ${mib(sample.heap).toFixed(1)} MiB\n`);
  }
  const result = await run;
  const p = result.problems;
  if (p.errors + p.timeouts + p.non2xx + p.mismatches > 0) {
    throw new Error(`soak: ${p.errors} errors, ${p.timeouts} timeouts, ${p.non2xx} non-2xx, ${p.mismatches} failed checks${p.sample ? `; first failed answer: ${p.sample}` : ''}`);
  }
  const endRss = rssBytes(gateway.pid);
  await sleep(10_000);
  const idleAfter = { rss: rssBytes(gateway.pid), heap: await heapUsed() };
  await gateway.stop();

  const measured = series.filter((s) => s.t >= MEMORY_WARMUP_SECONDS);
  const afterWarmup = measured[0]!;
  const last = measured.at(-1)!;
  const maxRss = Math.max(...measured.map((s) => s.rss));
  const minRss = Math.min(...measured.map((s) => s.rss));
  // Single samples swing with the GC (tens of MiB at this load), so the verdict compares the mean of the
  // first and the last minute after warm-up and takes the trend over the whole measured window.
  const windowSeconds = Math.min(60, MEMORY_SECONDS / 2);
  const mean = (list: readonly MemorySample[], pick: (s: MemorySample) => number) => list.reduce((sum, s) => sum + pick(s), 0) / list.length;
  const firstWindow = measured.filter((s) => s.t <= afterWarmup.t + windowSeconds);
  const lastWindow = measured.filter((s) => s.t >= last.t - windowSeconds);
  const firstMeanRss = mean(firstWindow, (s) => s.rss);
  const lastMeanRss = mean(lastWindow, (s) => s.rss);
  const slope = slopePerMinute(measured.map((s) => [s.t, mib(s.rss)] as const));
  const heapSlope = slopePerMinute(measured.map((s) => [s.t, mib(s.heap)] as const));
  const growth = mib(lastMeanRss - firstMeanRss);
  const allowed = Math.max(16, mib(firstMeanRss) * 0.1);
  const flat = growth <= allowed && slope <= 2;
  const summary = `mean RSS ${mib(firstMeanRss).toFixed(0)} MiB over the first ${windowSeconds} s after warm-up, ${mib(lastMeanRss).toFixed(0)} MiB over the last ${windowSeconds} s (${signed(growth)} MiB${flat ? '' : `, allowed +${allowed.toFixed(0)}`}); trend ${signed(slope)} MiB/min${flat ? '' : ' (allowed +2.00)'}; max ${mib(maxRss).toFixed(0)} MiB`;
  const verdict = flat ? `met: ${summary}` : `**not met**: ${summary}`;

  const rps = (result.requests / result.elapsedMs) * 1000;
  const cpuPerRequest = ((result.targetCpuTicks / result.ticksPerSecond) * 1e6) / result.requests;
  const step = Math.max(MEMORY_SAMPLE_SECONDS, Math.round(total / 12 / MEMORY_SAMPLE_SECONDS) * MEMORY_SAMPLE_SECONDS);
  const shown = series.filter((s) => s.t % step === 0 || s === series.at(-1));
  const markdown = [
    '## Memory at steady load',
    '',
    ...machine,
    `- Command: \`${commandLine()}\``,
    `- Load: ${CONNECTIONS} connections, each sending in turn non-streamed, 20-event, non-streamed, 20-event and 1,000-event requests; ` +
      `${MEMORY_WARMUP_SECONDS} s warm-up, then ${MEMORY_SECONDS} s measured; RSS from \`/proc\` and V8 heap used from \`/metrics\` every ${MEMORY_SAMPLE_SECONDS} s.`,
    `- Served ${int(result.requests)} answers (${int(rps)}/s, gateway CPU ${fixed(cpuPerRequest, 0)} µs per answer on average over the mix), all checked: no error, timeout, non-2xx or failed check.`,
    '',
    '| | RSS (MiB) | V8 heap used (MiB) |',
    '|---|---:|---:|',
    `| idle, before load | ${mib(idleRss).toFixed(1)} | |`,
    `| after warm-up (t = ${afterWarmup.t} s) | ${mib(afterWarmup.rss).toFixed(1)} | ${mib(afterWarmup.heap).toFixed(1)} |`,
    `| end of load (t = ${last.t} s) | ${mib(last.rss).toFixed(1)} | ${mib(last.heap).toFixed(1)} |`,
    `| max / min after warm-up | ${mib(maxRss).toFixed(1)} / ${mib(minRss).toFixed(1)} | ${mib(Math.max(...measured.map((s) => s.heap))).toFixed(1)} / ${mib(Math.min(...measured.map((s) => s.heap))).toFixed(1)} |`,
    `| mean over the first / last ${windowSeconds} s after warm-up | ${mib(firstMeanRss).toFixed(1)} / ${mib(lastMeanRss).toFixed(1)} | ${mib(mean(firstWindow, (s) => s.heap)).toFixed(1)} / ${mib(mean(lastWindow, (s) => s.heap)).toFixed(1)} |`,
    `| least-squares trend after warm-up | ${signed(slope)} per min | ${signed(heapSlope)} per min |`,
    `| 10 s after the load stopped | ${mib(idleAfter.rss).toFixed(1)} | ${mib(idleAfter.heap).toFixed(1)} |`,
    '',
    `Samples (t in s: RSS / heap used, MiB): ${shown.map((s) => `${s.t}: ${mib(s.rss).toFixed(0)} / ${mib(s.heap).toFixed(0)}`).join(' · ')}; RSS right after the load: ${mib(endRss).toFixed(0)}.`,
    '',
    `"Flat" means: mean RSS over the last ${windowSeconds} s at most max(16 MiB, 10%) above the mean over the first ${windowSeconds} s after warm-up, and a least-squares RSS trend over the measured window of at most +2 MiB per minute (a leak of even 1 KiB per answer at this rate would show as tens of MiB per minute). (Single samples swing by tens of MiB with the GC at this load.)`,
    '',
    `**Verdict**: ${verdict}`,
    '',
    `- Wall time ${((Date.now() - started) / 60_000).toFixed(1)} min.`,
  ].join('\n');
  process.stdout.write(`\n${markdown}\n`);
  if (WRITE) {
    writeBlock('MEMORY', markdown);
    writeBlock('METHOD', METHOD);
    process.stderr.write(`bench: wrote ${BENCHMARKS_MD}\n`);
  }
}

function slopePerMinute(points: ReadonlyArray<readonly [number, number]>): number {
  if (points.length < 2) return 0;
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 60;
}

// ---------------------------------------------------------------------------------------------- main

ensureBuilt('bench');

try {
  if (SOAK) await memorySoak();
  else await comparison();
} catch (error) {
  fatal(error);
}
killAll();
process.exit(0);
