// `npm run bench:streams` (issue 13): how many open streams one process holds, and what each costs. A provider
// that paces its chunks (paced-provider.ts, one per second by default) and load processes of their own (stream-load.ts)
// that open N streams and read them; for each N, the raw proxy, the got proxy and the gateway (dist/, as ops run
// it, on the bench routing table) are measured in turn, each in a fresh process with a fresh provider. While all
// N are open: the target's RSS above its idle RSS per stream, its CPU per relayed chunk, and the gap each caller
// saw between two chunks minus the gap the provider made (p50/p99); then every stream must end whole. For the
// gateway, from the first stream opened to the window's end: /health's answer time and the event loop's lag p99
// in the serving worker (gateway-watch.ts). The gateway's RSS and CPU are the cluster worker's (the pid /health
// names), not the cluster primary's. Each process's open-file limit is raised to what its share needs (prlimit;
// file-limits.ts) and printed; where the hard limit does not allow it, the run holds as many streams as fit and
// says so. Load processes connect from 127.0.0.2, 127.0.0.3, … so that ephemeral ports do not run short.
//
//   npm run bench:streams                       N = 4,000 and 10,000; writes the STREAMS block of BENCHMARKS.md
//   npm run bench:streams -- --quick            N = 200 and 800, short windows, prints only
//   npm run bench:streams -- --heap             and, for each N, one more gateway run with a heap snapshot idle and
//                                               one with N open: the heap per stream by class (its row reported apart)
//
// Environment: BENCH_STREAMS_COUNTS (4000,10000), BENCH_STREAMS_PROMPT_BYTES (0: one short message; 20480: a real
// prompt of that many bytes in ~100-byte messages, which the gateway must let go of once each answer has started,
// issue 25 item 8), BENCH_STREAMS_GATEWAY_NODE_ARGS (node options for the gateway), BENCH_STREAMS_GATEWAY_DIST (another build's dist/ as the gateway), BENCH_STREAMS_PACE_MS (1000), BENCH_STREAMS_WINDOW_SECONDS (15), BENCH_STREAMS_KEEP_HEAP (a folder: keep --heap's snapshots there),
// BENCH_STREAMS_OPEN_PER_SECOND (250), BENCH_STREAMS_RAMP_SLACK (3), BENCH_STREAMS_TARGETS (raw proxy,got proxy,gateway), BENCH_PIN (on: the
// target on CPU 0, provider and load on the others); STREAM_LOAD_DEBUG=1 has each load process print how many
// streams it asked for, opened and saw end, every 5 s (to see where opening stalls).
// Needs `npm run build` first (it builds when dist/ is missing). Loopback only; every child is killed on the way out.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startGateway } from './bench-gateway.js';
import { killAll, killAllOnExit } from './children.js';
import { filesNeeded, limitText, raiseFileLimit, streamsWithin } from './file-limits.js';
import { watchGateway, workerMemory, type GatewayWatch, type WorkerMemory } from './gateway-watch.js';
import { heapGrowthPerStream, takeHeapSnapshot, type HeapByClass } from './heap-breakdown.js';
import { cpuMicros, median, rssBytes } from './proc-stats.js';
import { ensureBuilt } from './report.js';
import { envNumber, OTHER_CPUS, TARGET_CPUS } from './settings.js';
import { startStreamLoad, type StreamLoad } from './stream-load-client.js';
import { CALLER_HEADERS } from './bench-protocol.js';
import { addHistogram, histogramPercentileMs, HISTOGRAM_BUCKETS } from './stream-protocol.js';
import { writeStreamsReport, type StreamsResult } from './streams-report.js';
import { fatal, pin, runDir, startForked } from './targets.js';
import { int } from './format.js';

const argv = process.argv.slice(2);
for (const arg of argv) {
  if (!/^--(quick|heap|no-write)$/.test(arg)) {
    process.stderr.write(`bench:streams: unknown argument ${arg} (known: --quick, --heap, --no-write)\n`);
    process.exit(2);
  }
}
const QUICK = argv.includes('--quick');
const HEAP = argv.includes('--heap');
const WRITE = !QUICK && !argv.includes('--no-write');
const COUNTS = (process.env['BENCH_STREAMS_COUNTS'] ?? (QUICK ? '200,800' : '4000,10000')).split(',').map(Number);
if (COUNTS.some((n) => !Number.isInteger(n) || n < 1 || n > 100_000)) {
  process.stderr.write('bench:streams: BENCH_STREAMS_COUNTS must be integers from 1 to 100000, comma-separated\n');
  process.exit(2);
}
// One chunk per second per stream: 4,000 streams are then 4,000 chunks/s. At 100 ms they would be 40,000 chunks/s,
// more than the one core left to the provider and the load side can write and read, and more than a whole core
// of relaying even for the raw proxy (it spends ~35 µs of CPU per chunk, each chunk being its own read and write).
const PACE_MS = envNumber('BENCH_STREAMS_PACE_MS', 1000, 5, 10_000);
const WINDOW_SECONDS = envNumber('BENCH_STREAMS_WINDOW_SECONDS', QUICK ? 5 : 15, 2, 3600);
const OPEN_PER_SECOND = envNumber('BENCH_STREAMS_OPEN_PER_SECOND', 250, 10, 100_000);
/** How much longer than asked opening may take (a loaded machine): how long the run waits for it, and how long streams last. */
const RAMP_SLACK = envNumber('BENCH_STREAMS_RAMP_SLACK', 3, 1, 20);
const PROMPT_BYTES = envNumber('BENCH_STREAMS_PROMPT_BYTES', 0, 0, 1024 * 1024);
/** Node options for the gateway only (e.g. `--max-semi-space-size=2`, to see what the young generation's growth costs). */
const NODE_ARGS = (process.env['BENCH_STREAMS_GATEWAY_NODE_ARGS'] ?? '').split(' ').filter((arg) => arg !== '');
/** Another build's dist/ to measure as the gateway (a before/after comparison); default: this tree's. */
const GATEWAY_DIST = process.env['BENCH_STREAMS_GATEWAY_DIST'] || undefined;
const SETTLE_SECONDS = 2;
/** Streams per load process: each keeps well under its own file limit and one core's worth of reading. */
const STREAMS_PER_LOAD = 2000;
const ALL_TARGETS = ['raw proxy', 'got proxy', 'gateway'] as const;
type TargetName = (typeof ALL_TARGETS)[number];
const TARGETS = (process.env['BENCH_STREAMS_TARGETS'] ?? ALL_TARGETS.join(',')).split(',') as TargetName[];
if (TARGETS.some((name) => !ALL_TARGETS.includes(name))) {
  process.stderr.write(`bench:streams: BENCH_STREAMS_TARGETS must name some of ${ALL_TARGETS.join(', ')}, comma-separated\n`);
  process.exit(2);
}

killAllOnExit('bench:streams');
process.on('uncaughtException', (error) => fatal(error));
process.on('unhandledRejection', (error) => fatal(error));
ensureBuilt('bench:streams');

/** `origin`: the gateway's, whose /health and /metrics are watched; null for the proxies, which have neither. */
async function startTarget(name: TargetName, providerPort: number, heapDir: string | null): Promise<{ pid: number; url: string; model: string; origin: string | null; stop(): Promise<void> }> {
  if (name === 'gateway') {
    const nodeArgs = [...NODE_ARGS, ...(heapDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${heapDir}`] : [])];
    const gateway = await startGateway(providerPort, nodeArgs, GATEWAY_DIST);
    return { pid: gateway.pid, url: gateway.url, model: 'bench/llama3.2', origin: gateway.origin, stop: () => gateway.stop() };
  }
  const { child, port } = await startForked(name === 'raw proxy' ? 'raw-proxy.ts' : 'got-proxy.ts', `the ${name}`, { UPSTREAM_PORT: String(providerPort) });
  return { pid: child.pid!, url: `http://127.0.0.1:${port}/v1/chat/completions`, model: 'llama3.2', origin: null, stop: async () => void child.kill('SIGKILL') };
}

/**
 * Raises the open-file limit of every process of a run to what `requested` streams need (two sockets each in the
 * target, one in the provider and in a load process) and prints what it set; returns how many streams fit.
 */
function holdableStreams(name: TargetName, requested: number, targetPid: number, providerPid: number, loads: readonly StreamLoad[]): { streams: number; note: string } {
  const processes = [
    { what: name === 'gateway' ? 'gateway (cluster worker)' : name, pid: targetPid, perStream: 2, share: requested },
    { what: 'paced provider', pid: providerPid, perStream: 1, share: requested },
    ...loads.map((load) => ({ what: 'load process', pid: load.pid, perStream: 1, share: Math.ceil(requested / loads.length) })),
  ];
  let streams = requested;
  const set: string[] = [];
  for (const p of processes) {
    const wanted = filesNeeded(p.pid, p.perStream * p.share);
    const limit = raiseFileLimit(p.pid, wanted);
    set.push(`${p.what} ${p.pid}: ${limitText(limit)} for ${wanted} needed`);
    streams = Math.min(streams, Math.floor(streamsWithin(p.pid, limit, p.perStream) * (p.share === requested ? 1 : loads.length)));
  }
  process.stderr.write(`bench:streams: open-file limits set (prlimit): ${set.join('; ')}\n`);
  const note = streams < requested ? `${int(requested)} asked; the open-file hard limit here holds ${int(streams)} (raising it needs CAP_SYS_RESOURCE, or \`ulimit -Hn\` raised before the run)` : '';
  if (note) process.stderr.write(`bench:streams: ${note}\n`);
  return { streams, note };
}

/**
 * One target at one stream count, in fresh processes. `withHeap` (the gateway only) takes a heap snapshot idle and
 * one with every stream open; a snapshot disturbs RSS and CPU, so that run's row is reported apart.
 */
async function measure(name: TargetName, requested: number, withHeap = false): Promise<StreamsResult> {
  const heapDir = withHeap ? join(runDir(), 'heap') : null;
  if (heapDir) mkdirSync(heapDir, { recursive: true });
  const provider = await startForked('paced-provider.ts', 'the paced provider', { PACE_MS: String(PACE_MS) });
  const target = await startTarget(name, provider.port, heapDir);
  const loadCount = Math.ceil(requested / STREAMS_PER_LOAD);
  const loads: StreamLoad[] = await Promise.all(Array.from({ length: loadCount }, () => startStreamLoad()));
  const { streams, note } = holdableStreams(name, requested, target.pid, provider.child.pid!, loads);
  pin(target.pid, TARGET_CPUS);
  for (const pid of [process.pid, provider.child.pid!, ...loads.map((l) => l.pid)]) pin(pid, OTHER_CPUS);
  await sleep(1000);
  const idleRss = rssBytes(target.pid);
  const idleMemory = target.origin ? workerMemory(await (await fetch(`${target.origin}/metrics`)).text()) : null;
  const idleHeap: HeapByClass | null = heapDir ? await takeHeapSnapshot(target.pid, heapDir) : null;

  const rampSeconds = streams / OPEN_PER_SECOND;
  // Long enough for every stream to be open through the window even when opening takes RAMP_SLACK (3) times as long
  // as asked (a loaded machine), which is as long as the run waits for it.
  const events = Math.ceil(((rampSeconds * RAMP_SLACK + SETTLE_SECONDS + WINDOW_SECONDS + 5) * 1000) / PACE_MS);
  const body = JSON.stringify({ model: target.model, messages: promptMessages(PROMPT_BYTES), stream: true, stream_options: { include_usage: true }, max_tokens: events });
  const prompt = PROMPT_BYTES > 0 ? `, prompts of ${body.length} bytes` : '';
  process.stderr.write(`bench:streams: ${name}${withHeap ? ' (heap snapshots)' : ''}, ${streams} streams of ${events} chunks (one per ${PACE_MS} ms)${prompt}, opening ${OPEN_PER_SECOND}/s… `);
  const watch = target.origin ? watchGateway(target.origin, target.pid) : null;
  loads.forEach((load, i) => {
    const share = Math.floor(streams / loadCount) + (i < streams % loadCount ? 1 : 0);
    load.send({ type: 'open', url: target.url, body, headers: CALLER_HEADERS, streams: share, perSecond: OPEN_PER_SECOND / loadCount, events, localAddress: `127.0.0.${2 + i}` });
  });
  await Promise.all(loads.map((load) => load.next('opened', (rampSeconds * RAMP_SLACK + 60) * 1000)));
  await sleep(SETTLE_SECONDS * 1000);

  const rssSamples: number[] = [];
  const cpuBefore = cpuMicros(target.pid);
  const started = performance.now();
  for (const load of loads) load.send({ type: 'measure' });
  while (performance.now() - started < WINDOW_SECONDS * 1000) {
    await sleep(250);
    rssSamples.push(rssBytes(target.pid));
  }
  const windows = loads.map((load) => load.next('window', 30_000));
  for (const load of loads) load.send({ type: 'stop' });
  const cpu = cpuMicros(target.pid) - cpuBefore;
  const seconds = (performance.now() - started) / 1000;
  const replies = await Promise.all(windows);
  const watched: GatewayWatch | null = watch ? await watch.stop() : null;
  const heap = idleHeap && heapDir ? heapGrowthPerStream(idleHeap, await takeHeapSnapshot(target.pid, heapDir), streams) : null;

  const finished = loads.map((load) => load.next('finished', (events * PACE_MS) + 120_000));
  for (const load of loads) load.send({ type: 'finish' });
  const ends = await Promise.all(finished);
  await target.stop();
  for (const load of loads) load.stop();
  provider.child.kill('SIGKILL');

  const addedGap = new Array<number>(HISTOGRAM_BUCKETS).fill(0);
  const latency = new Array<number>(HISTOGRAM_BUCKETS).fill(0);
  for (const reply of replies) {
    addHistogram(addedGap, reply.addedGap);
    addHistogram(latency, reply.latency);
  }
  const windowEvents = replies.reduce((sum, r) => sum + r.events, 0);
  const errors = new Map<string, number>();
  for (const end of ends) for (const [kind, count] of end.errors) errors.set(kind, (errors.get(kind) ?? 0) + count);
  const result: StreamsResult = {
    target: withHeap ? `${name} (heap snapshots)` : name,
    requested,
    streams,
    note,
    watch: watched,
    openDuringWindow: replies.reduce((sum, r) => sum + r.openNow, 0),
    idleRss,
    windowRss: median(rssSamples),
    peakRss: Math.max(...rssSamples),
    cpuPerEvent: cpu / windowEvents,
    cpuShare: cpu / 1e6 / seconds,
    eventsPerSecond: windowEvents / seconds,
    addedGapP50: histogramPercentileMs(addedGap, 50),
    addedGapP99: histogramPercentileMs(addedGap, 99),
    latencyP50: histogramPercentileMs(latency, 50),
    latencyP99: histogramPercentileMs(latency, 99),
    completed: ends.reduce((sum, e) => sum + e.completed, 0),
    errors: [...errors],
    heap,
  };
  const watchText = watched ? `, /health max ${watched.healthMaxMs.toFixed(1)} ms, lag p99 worst ${watched.lagP99WorstMs.toFixed(1)} ms` : '';
  process.stderr.write(`${((result.windowRss - idleRss) / 1024 / streams).toFixed(1)} KiB/stream, p99 added gap ${result.addedGapP99.toFixed(2)} ms${watchText}, ${result.completed}/${streams} whole${errorsText(result.errors)}\n`);
  if (idleMemory && watched?.memory) process.stderr.write(`bench:streams: ${memoryText(idleMemory, watched.memory, result.peakRss - idleRss, streams)}\n`);
  return result;
}

const errorsText = (errors: readonly [string, number][]) => (errors.length ? ` (${errors.map(([kind, n]) => `${n}× ${kind}`).join(', ')})` : '');

/** The worker's growth from idle to the window's last scrape, per stream: heap (total, used, new and old space), external, and the rest of RSS (native). */
function memoryText(idle: WorkerMemory, loaded: WorkerMemory, rssGrowth: number, streams: number): string {
  const per = (key: keyof WorkerMemory) => (loaded[key] - idle[key]) / 1024 / streams;
  const native = rssGrowth / 1024 / streams - per('heapTotal') - per('external');
  return `per stream, idle to window end: heap total ${per('heapTotal').toFixed(1)} KiB (used ${per('heapUsed').toFixed(1)}, new space ${per('newSpace').toFixed(1)}, old space ${per('oldSpace').toFixed(1)}), external ${per('external').toFixed(1)}, rest of peak RSS (native: sockets, libuv, malloc) ${native.toFixed(1)}`;
}

/** A conversation of about `bytes` bytes in ~100-byte turns (a real prompt's shape: many values), or one short ask. */
function promptMessages(bytes: number): { role: string; content: string }[] {
  if (bytes === 0) return [{ role: 'user', content: 'Tell me a long story.' }];
  const turn = 'The quick brown fox jumps over the lazy dog while the gateway relays every chunk as it comes.';
  return Array.from({ length: Math.max(1, Math.round(bytes / (turn.length + 32))) }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${i} ${turn}` }));
}

try {
  const results: StreamsResult[] = [];
  for (const streams of COUNTS) {
    for (const name of TARGETS) results.push(await measure(name, streams));
    if (HEAP) results.push(await measure('gateway', streams, true));
  }
  writeStreamsReport(results, { paceMs: PACE_MS, windowSeconds: WINDOW_SECONDS, openPerSecond: OPEN_PER_SECOND, promptBytes: PROMPT_BYTES, write: WRITE, command: ['npm run bench:streams', ...(argv.length ? ['--', ...argv] : [])].join(' ') });
} catch (error) {
  fatal(error);
}
killAll();
process.exit(0);
