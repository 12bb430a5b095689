// `npm run bench:profile` (issue 25): where the gateway's CPU per request goes, beside the got proxy's, by part.
// Each target (the got proxy, then the gateway as `npm run bench` runs it: log to a file, metrics, a limited caller)
// runs with `--perf-basic-prof` in front of the bench's mock provider, serves BENCH_PROFILE_WARMUP requests (30000:
// after 5000, TurboFan was still compiling on a helper thread: the JIT part of a non-streamed gateway request was
// 0.143 samples after 5000 and 0.012 after 30000, Node 24.21.0, 2026-11-26),
// then Linux `perf record` samples its CPU (cpu-clock, call stacks, kernel included) while it serves
// BENCH_PROFILE_REQUESTS (20000) more, at 8 keep-alive connections. Each sample is put in one part by the first
// JavaScript frame on its stack (the code that asked for the work: its own, the builtins and runtime it called, and
// the kernel under its system calls), or, with none, by what is running (GC, the JIT, other native work).
// Parts are shown as samples per request, so the two targets compare directly; samples are CPU time, not
// instructions (perf's software clock; this project's VMs have no hardware counters), so repeat a run before
// trusting a difference under ~0.02. Needs `perf` (Debian: apt-get install linux-perf) and the right to use it.
//
//   npm run bench:profile                  non-streamed requests
//   npm run bench:profile -- --streamed    20-event streams
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startGateway } from './bench-gateway.js';
import { CALLER_HEADERS } from './bench-protocol.js';
import { killAllOnExit, portMessage, track } from './children.js';
import { profileParts, type Parts } from './profile-parts.js';
import { describeMachine, ensureBuilt, transpile } from './report.js';
import { runDir, startMockProvider } from './targets.js';

const argv = process.argv.slice(2);
if (argv.some((arg) => arg !== '--streamed')) {
  process.stderr.write('bench:profile: the only argument is --streamed\n');
  process.exit(2);
}
const STREAMED = argv.includes('--streamed');
const WARMUP = Number(process.env['BENCH_PROFILE_WARMUP'] ?? 30000);
const REQUESTS = Number(process.env['BENCH_PROFILE_REQUESTS'] ?? 20000);
const CONNECTIONS = 8;
/** perf-basic-prof names JIT code for perf (/tmp/perf-<pid>.map) and also writes V8's log: into this run's folder, not the repo. */
const perfArgs = (name: string) => ['--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${join(runDir(), `${name}-v8.log`)}`];

try {
  execFileSync('perf', ['--version'], { stdio: 'ignore' });
} catch {
  process.stderr.write('bench:profile: Linux perf is not installed (Debian: apt-get install linux-perf)\n');
  process.exit(1);
}
killAllOnExit('bench:profile');
ensureBuilt('bench:profile');
const machine = describeMachine(execFileSync('perf', ['--version'], { encoding: 'utf8' }).trim());

interface Profiled {
  readonly name: string;
  readonly url: string;
  readonly model: string;
  readonly pid: number;
  stop(): Promise<void>;
}

async function startGotProxy(mockPort: number): Promise<Profiled> {
  const child = track(
    fork(transpile('got-proxy.ts', runDir()), [], { execArgv: perfArgs('got-proxy'), env: { PATH: process.env['PATH'] ?? '', UPSTREAM_PORT: String(mockPort) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
  const port = await portMessage(child);
  return { name: 'got proxy', url: `http://127.0.0.1:${port}/v1/chat/completions`, model: 'llama3.2', pid: child.pid!, stop: () => stopChild(child) };
}

async function stopChild(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

async function drive(target: Profiled, total: number): Promise<void> {
  const body = JSON.stringify({ model: target.model, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 20, ...(STREAMED ? { stream: true } : {}) });
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  let left = total;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(target.url, { method: 'POST', agent, headers: { 'content-type': 'application/json', ...CALLER_HEADERS } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${target.name}: HTTP ${res.statusCode}`))));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => { while (left-- > 0) await one(); }));
  agent.destroy();
}

/** Serves the warm-up, then samples the target while it serves REQUESTS; its parts per request. */
async function profile(target: Profiled): Promise<Parts> {
  await drive(target, WARMUP);
  const data = join(runDir(), `${target.name.replace(/\W+/g, '-')}.perf`);
  const perf = spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', '2999', '-g', '-p', String(target.pid), '-o', data], { stdio: 'ignore' });
  await sleep(1000); // perf attaches
  await drive(target, REQUESTS);
  perf.kill('SIGINT');
  await once(perf, 'exit');
  const script = execFileSync('perf', ['script', '-i', data, '-F', 'ip,sym'], { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] });
  rmSync(data, { force: true });
  rmSync(`/tmp/perf-${target.pid}.map`, { force: true });
  return profileParts(script);
}

const mock = await startMockProvider();
const results: [string, Parts][] = [];
for (const start of [() => startGotProxy(mock.port), () => startGateway(mock.port, perfArgs('gateway')).then((gateway) => ({ ...gateway, model: 'bench-one/llama3.2' }))]) {
  const target = await start();
  process.stderr.write(`bench:profile: ${target.name}: ${WARMUP} warm-up, then ${REQUESTS} sampled requests\n`);
  results.push([target.name, await profile(target)]);
  await target.stop();
}

const [[, got], [, gateway]] = results as [[string, Parts], [string, Parts]];
const names = [...new Set([...gateway.samples.keys(), ...got.samples.keys()])];
const perRequest = (parts: Parts, name: string) => (parts.samples.get(name) ?? 0) / REQUESTS;
names.sort((a, b) => perRequest(gateway, b) - perRequest(gateway, a));
const lines = [
  `## Where the CPU goes: samples per request by part (\`npm run bench:profile${STREAMED ? ' -- --streamed' : ''}\`)`,
  '',
  ...machine,
  `- ${STREAMED ? '20-event streams' : 'Non-streamed requests'}, route bench-one/llama3.2; ${WARMUP} warm-up + ${REQUESTS} sampled requests per target, ${CONNECTIONS} keep-alive connections; perf cpu-clock at 2999 Hz`,
  '',
  '| Part | got proxy | gateway | gateway − got proxy |',
  '|---|---:|---:|---:|',
  ...names
    .filter((name) => perRequest(gateway, name) >= 0.005 || perRequest(got, name) >= 0.005)
    .map((name) => `| ${name} | ${perRequest(got, name).toFixed(3)} | ${perRequest(gateway, name).toFixed(3)} | ${(perRequest(gateway, name) - perRequest(got, name)).toFixed(3)} |`),
  `| **all** | **${(got.total / REQUESTS).toFixed(3)}** | **${(gateway.total / REQUESTS).toFixed(3)}** | **${((gateway.total - got.total) / REQUESTS).toFixed(3)}** |`,
  '',
  '- One sample is 1/2999 s of CPU; perf slows each target, so compare the parts, not these totals with `npm run bench`.',
];
process.stdout.write(`${lines.join('\n')}\n`);
mock.child.kill('SIGKILL');
process.exit(0);
