// `npm run bench:allocation` (issue 40, line 6): bytes allocated per request, the gateway beside the got proxy
// (the line's base), the raw proxy (the floor) and the Express proxy (the design before any feature). What
// survives a young collection is what costs under load, and every byte allocated is a candidate.
//
// Each target runs in its own process with its inspector open (`--inspect=127.0.0.1:0`); the gateway as
// `npm run bench` starts it (bench-gateway.ts: `node dist/server.js`, request log to a file, metrics, prices, a
// limited caller), whose cluster worker serves (pid from /health) and whose primary is profiled beside it. Each
// target first serves BENCH_ALLOC_WARMUP requests (3000) of every scenario; then, per scenario and round, V8's
// sampling heap profiler runs (HeapProfiler.startSampling every ~BENCH_ALLOC_INTERVAL bytes, 512, keeping the
// samples of objects young and full collections freed) in each of its processes over BENCH_ALLOC_REQUESTS (1000)
// checked requests at 8 keep-alive connections. Bytes per request = the profile's bytes ÷ requests
// (allocation-profile.ts): an estimate from sampling, with two rounds so its spread shows.
//
//   npm run bench:allocation               about 1–2 minutes on 2 cores; writes the ALLOCATION block (in docs/performance.md)
//   npm run bench:allocation -- --no-write prints only
//   BENCH_ALLOC_KEEP_PROFILES=folder       also keeps every profile there (made if missing), one file per target, scenario,
//                                          process and round (`gateway-streamed-worker-1.heapprofile`), to open in DevTools'
//                                          Memory tab or sum by function: where the bytes went, not just how many
import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { allocatedBytes, ALLOCATION_MARGIN_BYTES, allocationVerdict, sampledBytes } from './allocation-profile.js';
import { startGateway } from './bench-gateway.js';
import { CONNECTIONS, drive, type Scenario } from './callgrind-target.js';
import { bareEnv, killAll, killAllOnExit, portMessage, track, whenReady } from './children.js';
import { int } from './format.js';
import { connectRemoteHeap, inspectFlagForCluster, inspectorUrls, type RemoteHeap } from './inspector-gc.js';
import { blockFile, describeMachine, ensureBuilt, REPO, transpile, writeBlock } from './report.js';
import { envNumber } from './settings.js';
import { fatal, PROXIES, runDir, startMockProvider } from './targets.js';

for (const arg of process.argv.slice(2)) {
  if (arg !== '--no-write') {
    process.stderr.write(`bench:allocation: unknown argument ${arg} (known: --no-write)\n`);
    process.exit(2);
  }
}
const WRITE = !process.argv.includes('--no-write');
const WARMUP = Math.round(envNumber('BENCH_ALLOC_WARMUP', 3000, 1, 1_000_000));
const REQUESTS = Math.round(envNumber('BENCH_ALLOC_REQUESTS', 1000, 1, 1_000_000));
const INTERVAL = Math.round(envNumber('BENCH_ALLOC_INTERVAL', 512, 16, 1_048_576));
const ROUNDS = 2;
const KEEP_PROFILES = process.env['BENCH_ALLOC_KEEP_PROFILES'] || undefined;
if (KEEP_PROFILES) mkdirSync(KEEP_PROFILES, { recursive: true });
const ROUTING_MODEL = 'bench/llama3.2';
const UPSTREAM_MODEL = 'llama3.2';
const MESSAGES = [{ role: 'user', content: 'Say hello.' }];
const SCENARIOS: readonly Scenario[] = [
  { label: 'non-streamed', streamed: false, body: JSON.stringify({ model: ROUTING_MODEL, messages: MESSAGES, max_tokens: 64 }) },
  { label: 'streamed, 20 events', streamed: true, body: JSON.stringify({ model: ROUTING_MODEL, messages: MESSAGES, stream: true, max_tokens: 20 }) },
];

/** A target: where to send requests, the model its answers carry, and the inspector of each process profiled (the serving one first). */
interface Profiled {
  readonly name: string;
  readonly url: string;
  readonly model: string;
  readonly processes: readonly { role: string; pid: number; heap: RemoteHeap }[];
  /** Stops it gracefully (the gateway: its primary stops its worker); the proxies are killed with the other children. */
  stop?(): Promise<void>;
}

/** Inspector URLs in what `stderr()` returns, once `atLeast` are there (a cluster worker prints its own a little later). */
async function inspectorsOf(what: string, stderr: () => string, atLeast: number): Promise<RemoteHeap[]> {
  for (let waited = 0; inspectorUrls(stderr()).length < atLeast; waited += 100) {
    if (waited > 30_000) throw new Error(`${what}: ${inspectorUrls(stderr()).length} of ${atLeast} inspector URLs within 30 s:\n${stderr().slice(-2000)}`);
    await sleep(100);
  }
  return Promise.all(inspectorUrls(stderr()).map((url) => connectRemoteHeap(url)));
}

async function startProxy(proxy: (typeof PROXIES)[number], mockPort: number): Promise<Profiled> {
  const child = track(
    fork(transpile(proxy.file, runDir()), [], { cwd: REPO, execArgv: ['--inspect=127.0.0.1:0'], env: bareEnv({ ...proxy.env, UPSTREAM_PORT: String(mockPort) }), stdio: ['ignore', 'inherit', 'pipe', 'ipc'] }),
  );
  let stderr = '';
  child.stderr!.on('data', (piece: Buffer) => void (stderr.length < 100_000 && (stderr += piece.toString())));
  const port = await whenReady(child, `the ${proxy.name}`, portMessage(child));
  const [heap] = await inspectorsOf(proxy.name, () => stderr, 1);
  return { name: proxy.name, url: `http://127.0.0.1:${port}/v1/chat/completions`, model: UPSTREAM_MODEL, processes: [{ role: 'proxy', pid: child.pid!, heap: heap! }] };
}

/**
 * The gateway with its inspectors: the worker's takes the primary's port + 1 (both found free just before; another process on a busy
 * machine may still take one in between): such a start is made again (three tries), with what it printed.
 */
async function startProfiledGateway(mockPort: number, attempt = 1): Promise<Profiled> {
  const gateway = await startGateway(mockPort, [await inspectFlagForCluster()]);
  const heaps = await inspectorsOf('the gateway', () => gateway.stderrHead(), 2).catch(async (error: Error) => {
    await gateway.stop();
    if (attempt >= 3) throw error;
    process.stderr.write(`bench:allocation: ${error.message}\nbench:allocation: starting the gateway again\n`);
    return null;
  });
  if (!heaps) return startProfiledGateway(mockPort, attempt + 1);
  const byPid = new Map(await Promise.all(heaps.map(async (heap) => [await heap.pid(), heap] as const)));
  const processes = [
    { role: 'worker', pid: gateway.pid },
    { role: 'primary', pid: gateway.primaryPid },
  ].map((p) => {
    const heap = byPid.get(p.pid);
    if (!heap) throw new Error(`the gateway's ${p.role} (pid ${p.pid}) has no inspector among pids ${[...byPid.keys()].join(', ')}`);
    return { ...p, heap };
  });
  if (gateway.pid === gateway.primaryPid) throw new Error('/health answered from the cluster primary; expected its worker');
  return { name: 'gateway', url: `${gateway.origin}/v1/chat/completions`, model: ROUTING_MODEL, processes, stop: () => gateway.stop() };
}

/** Bytes per request of each of the target's processes over `REQUESTS` requests of `scenario`, and how many samples made each figure. */
async function profileRound(target: Profiled, scenario: Scenario, round: number): Promise<{ perRequest: number[]; samples: number; sampledOver: number }> {
  for (const { heap } of target.processes) await heap.startSampling(INTERVAL);
  await drive(target, scenario, REQUESTS);
  const profiles = await Promise.all(target.processes.map(({ heap }) => heap.stopSampling()));
  if (KEEP_PROFILES) {
    const slug = (text: string) => text.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '').toLowerCase();
    target.processes.forEach(({ role }, i) => {
      const file = `${slug(target.name)}-${scenario.streamed ? 'streamed' : 'non-streamed'}-${role}-${round + 1}.heapprofile`;
      writeFileSync(join(KEEP_PROFILES, file), JSON.stringify(profiles[i]));
    });
  }
  const sums = profiles.map((profile) => allocatedBytes(profile.head));
  // The samples' own sum, beside the serving process's figure: it runs high by its rounding (allocation-profile.ts).
  const sampledOver = sampledBytes(profiles[0]!) / Math.max(1, sums[0]!) - 1;
  return { perRequest: sums.map((sum) => sum / REQUESTS), samples: profiles[0]!.samples.length, sampledOver };
}

killAllOnExit('bench:allocation');
process.on('unhandledRejection', (error) => fatal(error));
ensureBuilt('bench:allocation');
const started = Date.now();
const machine = describeMachine('V8 sampling heap profiler over the inspector');
process.stderr.write(`bench:allocation: 4 targets, ${WARMUP} warm-up + ${ROUNDS} × ${REQUESTS} profiled requests per scenario, sampling every ~${INTERVAL} bytes (about 1–2 min)\n`);
let markdown: string;
try {
  const mock = await startMockProvider();
  const targets: Profiled[] = [];
  for (const proxy of PROXIES) targets.push(await startProxy(proxy, mock.port));
  targets.push(await startProfiledGateway(mock.port));
  // `${target}|${scenario}|${role}` → bytes per request, one per round.
  const figures = new Map<string, number[]>();
  let fewestSamples = Infinity;
  const sampledOver: number[] = [];
  for (const target of targets) {
    for (const scenario of SCENARIOS) await drive(target, scenario, WARMUP);
    for (const scenario of SCENARIOS) {
      for (let round = 0; round < ROUNDS; round++) {
        const { perRequest, samples, sampledOver: over } = await profileRound(target, scenario, round);
        fewestSamples = Math.min(fewestSamples, samples);
        sampledOver.push(over);
        target.processes.forEach(({ role }, i) => figures.set(`${target.name}|${scenario.label}|${role}`, [...(figures.get(`${target.name}|${scenario.label}|${role}`) ?? []), perRequest[i]!]));
      }
      const line = target.processes.map(({ role }) => `${role} ${figures.get(`${target.name}|${scenario.label}|${role}`)!.map((b) => int(b)).join(' / ')}`).join(', ');
      process.stderr.write(`bench:allocation: ${target.name.padEnd(13)} ${scenario.label.padEnd(20)} bytes per request: ${line}\n`);
    }
  }
  markdown = allocationBlock(figures, { fewestSamples, sampledOver, gatewayPids: targets.at(-1)!.processes.map((p) => `${p.role} pid ${p.pid}`).join(', ') });
  for (const target of targets) target.processes.forEach(({ heap }) => heap.close());
  await Promise.all(targets.map((target) => target.stop?.()));
} catch (error) {
  fatal(error);
}

function allocationBlock(figures: ReadonlyMap<string, number[]>, run: { fewestSamples: number; sampledOver: readonly number[]; gatewayPids: string }): string {
  const mean = (key: string) => figures.get(key)!.reduce((a, b) => a + b, 0) / ROUNDS;
  const kb = (bytes: number) => (bytes / 1000).toFixed(1);
  const pct = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)}%`;
  const rounds = (key: string) => figures.get(key)!.map(kb).join(' / ');
  let allMet = true;
  const rows = SCENARIOS.map((s) => {
    const [raw, got, express] = PROXIES.map((p) => mean(`${p.name}|${s.label}|proxy`)) as [number, number, number];
    const worker = mean(`gateway|${s.label}|worker`);
    const primary = mean(`gateway|${s.label}|primary`);
    const gateway = worker + primary;
    allMet &&= gateway <= got + ALLOCATION_MARGIN_BYTES;
    return `| ${s.label} | ${kb(raw)} | **${kb(got)}** (${rounds(`got proxy|${s.label}|proxy`)}) | ${kb(express)} | ${kb(worker)} (${rounds(`gateway|${s.label}|worker`)}) | ${kb(primary)} | **${kb(gateway)}** | ≤ ${kb(got + ALLOCATION_MARGIN_BYTES)} | ${allocationVerdict(gateway, got)} |`;
  });
  return [
    '#### Latest run',
    '',
    ...machine,
    `- Command: \`npm run bench:allocation\`; ${WARMUP} warm-up requests per target and scenario, then ${ROUNDS} rounds of ${REQUESTS} profiled requests, ${CONNECTIONS} keep-alive connections`,
    '',
    `Issue 40, line 6 — allocation per request ≤ the got proxy's + ${ALLOCATION_MARGIN_BYTES / 1000} KB, both kinds: **${allMet ? 'met' : 'not met'}**.`,
    '',
    '| Scenario | raw proxy (KB) | got proxy (rounds) | Express proxy | gateway worker (rounds) | gateway primary | gateway (worker + primary) | Limit | Verdict |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows,
    '',
    `- An estimate from V8's sampling heap profiler (a sample every ~${INTERVAL} bytes, at least ${int(run.fewestSamples)} samples per figure; objects freed by young and full collections kept): the call tree's self sizes summed, ÷ requests; KB = 1,000 bytes; mean of the rounds. The samples' own sizes summed come to ${pct(Math.min(...run.sampledOver))} to ${pct(Math.max(...run.sampledOver))} of that (each sample's count is rounded: allocation-profile.ts). A known allocation of 6.4 MB in another process is estimated within 3% (0.1% when written; test/scripts/bench/allocation-profile.test.ts).`,
    `- Every answer checked; the gateway as \`npm run bench\` runs it (log to a file, metrics, prices, one limited caller, two endpoints); its ${run.gatewayPids} profiled in the same window (the verdict counts both).`,
    `- Wall time ${((Date.now() - started) / 60_000).toFixed(1)} min.`,
  ].join('\n');
}

process.stdout.write(`\n${markdown}\n`);
if (WRITE) {
  writeBlock('ALLOCATION', markdown, '# Benchmarks\n');
  process.stderr.write(`bench:allocation: wrote ${blockFile('ALLOCATION')}\n`);
}
killAll();
process.exit(0);
