// `npm run bench:tracing-cpu`: CPU time per request with OpenTelemetry off and on, in one process, rounds
// alternated. A quick figure where valgrind is too slow (`npm run bench:tracing` counts instructions instead, and
// is the comparison to trust): the load client, the mock provider and an OTLP sink run in this process beside two
// gateways (createGateway, as server.ts builds it), one without telemetry and one exporting every span and the GenAI
// metrics over http/protobuf to the sink. Both gateways are driven alike, so the difference per request is what
// tracing costs. CPU time is process.cpuUsage (user + system): other processes' work is not counted, but a loaded
// machine still slows every instruction (caches, frequency), so compare the difference, not the absolute figures.
//
//   npm run bench:tracing-cpu    writes its block of BENCHMARKS.md (--no-write: prints only); BENCH_TRACING_REQUESTS per round, default 3000
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { pino } from 'pino';
import { createGateway } from '../../src/app.js';
import { startTelemetry } from '../../src/trace/start-telemetry.js';
import { compileRoutes } from '../routes/compile-routes.js';
import { describeMachine, writeBlock } from './report.js';

const REQUESTS = Number(process.env['BENCH_TRACING_REQUESTS'] ?? 3000);
const machine = describeMachine('src/ run through tsx, in one process');
const ROUNDS = 5;
const CONNECTIONS = 8;
const ROUTES = `version: 1
providers:
  bench: { base_url: http://127.0.0.1:9/v1, base_url_env: BENCH_URL }
models:
  bench/llama3.2: { upstream_model: llama3.2 }
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

const completion = JSON.stringify({
  id: 'chatcmpl-bench', object: 'chat.completion', created: 1763700000, model: 'llama3.2',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today?', refusal: null }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 9, completion_tokens: 10, total_tokens: 19 },
});
const chunk = (delta: object, finish: string | null) => `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1763700000, model: 'llama3.2', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const stream = [chunk({ role: 'assistant', content: '' }, null), ...Array.from({ length: 18 }, (_, i) => chunk({ content: ` token${i}` }, null)), chunk({}, 'stop'), 'data: [DONE]\n\n'].join('');

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const provider = await listen(
  createServer((req, res) => {
    let body = '';
    req.on('data', (part: Buffer) => (body += part.toString()));
    req.on('end', () => {
      if (body.includes('"stream":true')) res.writeHead(200, { 'content-type': 'text/event-stream' }).end(stream);
      else res.writeHead(200, { 'content-type': 'application/json' }).end(completion);
    });
  }),
);
let exports = 0;
const sink = await listen(
  createServer((req, res) => {
    exports++;
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  }),
);

const compiled = compileRoutes(ROUTES);
if (!compiled.ok) throw new Error(`bench routes do not compile: ${JSON.stringify(compiled.problems)}`);
const telemetry = startTelemetry(
  {
    traces: { url: `${sink}/v1/traces`, protocol: 'http/protobuf', headers: {} },
    metrics: { url: `${sink}/v1/metrics`, protocol: 'http/protobuf', headers: {} },
    serviceName: 'bench',
    resourceAttributes: {},
    sampler: 'parentbased_always_on',
    samplerRatio: 1,
    metricIntervalMs: 5000,
  },
  { version: '0.0.0-bench' },
);
const gatewayOptions = { env: { BENCH_URL: `${provider}/v1` }, version: '0.0.0-bench', maxBodyBytes: 1 << 20, maxUpstreamBodyBytes: 1 << 24, callerKeys: [], logger: pino({ level: 'silent' }) };
const off = await listen(createServer(createGateway(compiled.tables, gatewayOptions).app));
const on = await listen(createServer(createGateway(compiled.tables, { ...gatewayOptions, telemetry }).app));

const bodies = {
  'non-streamed': JSON.stringify({ model: 'bench/llama3.2', messages: [{ role: 'user', content: 'Say hello.' }] }),
  'streamed, 20 events': JSON.stringify({ model: 'bench/llama3.2', messages: [{ role: 'user', content: 'Say hello.' }], stream: true }),
};

/** CPU µs of this process per request while `total` requests go to `origin`. */
async function drive(origin: string, body: string, total: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(`${origin}/v1/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}`));
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
  let left = total;
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => { while (left-- > 0) await one(); }));
  const used = process.cpuUsage(before);
  agent.destroy();
  return (used.user + used.system) / total;
}

const signed = (n: number) => `${n >= 0 ? '+' : '−'}${Math.abs(n).toFixed(0)}`;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const rows: string[] = [];
for (const [label, body] of Object.entries(bodies)) {
  await drive(off, body, REQUESTS);
  await drive(on, body, REQUESTS);
  const offRuns: number[] = [];
  const onRuns: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    offRuns.push(await drive(off, body, REQUESTS));
    onRuns.push(await drive(on, body, REQUESTS));
  }
  const [a, b] = [median(offRuns), median(onRuns)];
  const [lowA, lowB] = [Math.min(...offRuns), Math.min(...onRuns)];
  const each = (runs: number[]) => runs.map((x) => x.toFixed(0)).join(', ');
  rows.push(`| ${label} | ${a.toFixed(0)} µs | ${b.toFixed(0)} µs | ${signed(b - a)} µs | ${lowA.toFixed(0)} µs | ${lowB.toFixed(0)} µs | ${signed(lowB - lowA)} µs | ${each(offRuns)} / ${each(onRuns)} |`);
}
await telemetry.shutdown(2000);
const markdown = [
  '## OpenTelemetry on and off: CPU time per request (`npm run bench:tracing-cpu`)',
  '',
  ...machine,
  `- Load average at the end: ${loadavg().map((x) => x.toFixed(2)).join(', ')}`,
  `- ${ROUNDS} alternated rounds of ${REQUESTS} requests per gateway and scenario (after one warm-up round each), ${CONNECTIONS} keep-alive connections; medians`,
  '',
  '| Scenario | off, median | on, median | difference | off, least | on, least | difference | every round, off / on (µs) |',
  '|---|---:|---:|---:|---:|---:|---:|---|',
  ...rows,
  '',
  '- CPU time of the whole process per request: the load client, the mock provider and the OTLP sink are in it too, so the',
  `  differences, not the totals, are tracing's cost. ${exports} export requests reached the sink.`,
].join('\n');
process.stdout.write(`\n${markdown}\n`);
if (!process.argv.includes('--no-write')) writeBlock('TRACING-CPU', markdown, '# Benchmarks\n');
process.exit(0);
