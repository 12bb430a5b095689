// `npm run bench:tracing-cpu` (issue 40, line 7: tracing on costs ≤ +25% CPU per request over tracing off): CPU
// time per request of the built gateway with OpenTelemetry off and on, side by side, rounds alternated.
// Both are `node dist/server.js` as `npm run bench` starts it (bench-gateway.ts: the bench routing table, request
// log to a file, metrics, prices, one limited caller); the second with OTEL_EXPORTER_OTLP_ENDPOINT on a local OTLP
// sink in this process (every request sampled, traces and GenAI metrics exported over http/protobuf by the SDK's
// batch processor). CPU is the gateway's own, from /proc: its cluster worker (which serves, pid from /health) plus
// its primary; the load client, the mock provider and the sink are other processes. `npm run bench:tracing` counts
// instructions instead (steadier on a loaded machine).
//
//   npm run bench:tracing-cpu    about 2 minutes; writes its block of BENCHMARKS.md (--no-write: prints only);
//                                BENCH_TRACING_REQUESTS per gateway, scenario and round (default 3000)
import { cpus, loadavg } from 'node:os';
import { startGateway, type Gateway } from './bench-gateway.js';
import { drive, type Scenario } from './callgrind-target.js';
import { killAll, killAllOnExit } from './children.js';
import { startOtlpSink } from './otlp-sink.js';
import { cpuMicros, median } from './proc-stats.js';
import { describeMachine, ensureBuilt, writeBlock } from './report.js';
import { envNumber } from './settings.js';
import { fatal, startMockProvider } from './targets.js';
import { tracingVerdict } from './tracing-verdict.js';

const REQUESTS = Math.round(envNumber('BENCH_TRACING_REQUESTS', 3000, 100, 1_000_000));
const ROUNDS = 5;
const MODEL = 'bench/llama3.2';
const MESSAGES = [{ role: 'user', content: 'Say hello.' }];
const SCENARIOS: readonly Scenario[] = [
  { label: 'non-streamed', streamed: false, body: JSON.stringify({ model: MODEL, messages: MESSAGES, max_tokens: 64 }) },
  { label: 'streamed, 20 events', streamed: true, body: JSON.stringify({ model: MODEL, messages: MESSAGES, stream: true, max_tokens: 20 }) },
];

killAllOnExit('bench:tracing-cpu');
process.on('unhandledRejection', (error) => fatal(error));
ensureBuilt('bench:tracing-cpu');
const started = Date.now();
const machine = describeMachine('the built gateway (dist/), CPU from /proc');
const mock = await startMockProvider();
const sink = await startOtlpSink('127.0.0.1');
const off = await startGateway(mock.port).catch(fatal);
const on = await startGateway(mock.port, [], undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: sink.origin }).catch(fatal);

/** CPU µs of the gateway (worker + primary) per request while `REQUESTS` checked requests of `scenario` go to it. */
async function round(gateway: Gateway, scenario: Scenario): Promise<number> {
  const cpu = () => cpuMicros(gateway.pid) + cpuMicros(gateway.primaryPid);
  const before = cpu();
  await drive({ name: gateway.name, url: gateway.url, model: MODEL }, scenario, REQUESTS);
  return (cpu() - before) / REQUESTS;
}

const signed = (n: number) => `${n >= 0 ? '+' : '−'}${Math.abs(n).toFixed(0)}`;

const rows: string[] = [];
const verdicts: string[] = [];
try {
  for (const scenario of SCENARIOS) {
    await round(off, scenario);
    await round(on, scenario);
    const offRuns: number[] = [];
    const onRuns: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      offRuns.push(await round(off, scenario));
      onRuns.push(await round(on, scenario));
    }
    const [a, b] = [median(offRuns), median(onRuns)];
    const [lowA, lowB] = [Math.min(...offRuns), Math.min(...onRuns)];
    const each = (runs: number[]) => runs.map((x) => x.toFixed(0)).join(', ');
    process.stderr.write(`bench:tracing-cpu: ${scenario.label}: off ${each(offRuns)} / on ${each(onRuns)} µs per request\n`);
    rows.push(`| ${scenario.label} | ${a.toFixed(0)} µs | ${b.toFixed(0)} µs | ${signed(b - a)} µs | **${(b / a).toFixed(2)}×** | ${lowA.toFixed(0)} µs | ${lowB.toFixed(0)} µs | ${each(offRuns)} / ${each(onRuns)} |`);
    verdicts.push(tracingVerdict(scenario.label, a, b));
  }
} catch (error) {
  fatal(error);
}
const load = loadavg()[0]!;
const markdown = [
  '## OpenTelemetry on and off: CPU time per request (`npm run bench:tracing-cpu`)',
  '',
  ...machine,
  `- Command: \`npm run bench:tracing-cpu\`; ${ROUNDS} alternated rounds of ${REQUESTS} checked requests per gateway and scenario (after one warm-up round each), 8 keep-alive connections; medians; load average ${load.toFixed(2)} at the end${load > cpus().length ? ' (**under load**: not a run of record)' : ''}`,
  '',
  ...verdicts,
  '',
  '| Scenario | off, median | on, median | difference | on ÷ off (≤ 1.25×) | off, least | on, least | every round, off / on (µs) |',
  '|---|---:|---:|---:|---:|---:|---:|---|',
  ...rows,
  '',
  `- The built gateway as \`npm run bench\` runs it, twice: as shipped (no OTEL_* variable: the SDK is not loaded) and with \`OTEL_EXPORTER_OTLP_ENDPOINT\` on a local sink (every request sampled; ${sink.requests()} export requests, ${(sink.bytes() / 1024).toFixed(0)} KiB). CPU (user + system, /proc, clock-tick resolution) of each gateway's worker and primary per request. Wall time ${((Date.now() - started) / 60_000).toFixed(1)} min.`,
].join('\n');
process.stdout.write(`\n${markdown}\n`);
if (!process.argv.includes('--no-write')) writeBlock('TRACING-CPU', markdown, '# Benchmarks\n');
await Promise.all([off.stop(), on.stop()]);
killAll();
process.exit(0);
