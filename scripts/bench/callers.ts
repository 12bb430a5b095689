// `npm run bench:callers` (issue 20): what a limited caller costs per request, side by side with no callers.
//
// 1. The admission alone, in this process: createCallerPolicy's admit + settle for a caller with every limit and a
//    budget, counted in memory (plain arithmetic) and in a real redis-server (one Lua script each way).
// 2. End to end: the gateway in a child process in front of the bench's mock provider, under autocannon
//    (8 keep-alive connections, non-streamed), three ways: no callers (anonymous), a limited caller counted in the
//    process, the same caller counted in Redis. Rounds alternate the three so a machine's drift hits each alike;
//    the figure is the gateway process's own CPU per request (user + system), and requests per second.
//
//   npm run bench:callers                 about 2 minutes; writes its block of BENCHMARKS.md
//   npm run bench:callers -- --no-write   prints only
//   npm run bench:callers -- --admissions N   N in-memory admissions only (for callgrind)
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type AutocannonResult } from 'autocannon';
import { pino } from 'pino';
import { compileRoutes } from '../routes/compile-routes.js';
import { createCallerPolicy } from '../../src/policy/caller-policy.js';
import type { RequestRecord } from '../../src/observe/request-log.js';
import { bareEnv, killAllOnExit, portMessage, track, whenReady } from './children.js';
import { BENCH_CALLER_KEY, benchCallersRoutes } from './callers-routes.js';
import { describeMachine, REPO, packageVersion, writeBlock } from './report.js';

const HERE = fileURLToPath(new URL('./', import.meta.url));
const WRITE = !process.argv.includes('--no-write');
const ROUNDS = 3;
const SECONDS = 8;
killAllOnExit('bench:callers');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startRedis(): Promise<string> {
  const port = await freePort();
  const child = track(spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'inherit'] }));
  let output = '';
  await whenReady(child, 'redis-server', new Promise<void>((resolve) => child.stdout!.on('data', (piece: Buffer) => ((output += piece.toString()), output.includes('Ready to accept') && resolve()))));
  return `redis://127.0.0.1:${port}`;
}

/** CPU ns of this process per admit + settle, one after the other (with Redis: the client's side of two round trips). */
async function admissionCost(redisUrl: string | null, iterations: number): Promise<number> {
  const compiled = compileRoutes(benchCallersRoutes(true));
  if (!compiled.ok) throw new Error('bench routes do not compile');
  const policy = createCallerPolicy(compiled.tables, { env: {}, redisUrl, clusterWorker: false, logger: pino({ level: 'silent' }) });
  const caller = policy.identify(BENCH_CALLER_KEY)!;
  const res = { setHeader() {} } as never;
  // The fields settle reads (through pricedUsage, which keeps its reading in `priced`).
  const record = { usage: { prompt_tokens: 9, completion_tokens: 10 }, price: compiled.tables.models['bench/llama3.2']!.price, priced: null } as unknown as RequestRecord;
  if (redisUrl) while (policy.storeUp?.() !== 1) await new Promise((resolve) => setTimeout(resolve, 20));
  const run = async (n: number) => {
    for (let i = 0; i < n; i++) policy.settle((await policy.admit(caller, res, { tokens: 20, usd: 0.00001 }))!, record);
  };
  await run(Math.min(iterations, 5000));
  // This process's CPU, not wall time: other processes on a shared machine then count less (steal time still does).
  const before = process.cpuUsage();
  await run(iterations);
  const cpu = process.cpuUsage(before);
  await policy.close();
  return ((cpu.user + cpu.system) * 1000) / iterations;
}

interface Variant {
  readonly name: string;
  readonly env: Record<string, string>;
  readonly headers: Record<string, string>;
}

async function startGateway(variant: Variant, providerUrl: string): Promise<{ child: ChildProcess; origin: string }> {
  const child = track(fork(join(HERE, 'callers-gateway.ts'), [], { cwd: REPO, execArgv: ['--import', 'tsx'], env: bareEnv({ BENCH_PROVIDER_URL: providerUrl, ...variant.env }), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  const port = await whenReady(child, `gateway (${variant.name})`, portMessage(child));
  return { child, origin: `http://127.0.0.1:${port}` };
}

async function cpuOf(child: ChildProcess): Promise<number> {
  child.send('cpu');
  const [reply] = (await once(child, 'message')) as [{ cpu: NodeJS.CpuUsage }];
  return reply.cpu.user + reply.cpu.system;
}

async function load(origin: string, headers: Record<string, string>, seconds: number): Promise<{ requests: number; non2xx: number }> {
  const result = await new Promise<AutocannonResult>((resolve, reject) => {
    autocannon(
      {
        url: `${origin}/v1/chat/completions`,
        method: 'POST',
        connections: 8,
        duration: seconds,
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ model: 'bench/llama3.2', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 64 }),
      },
      (error, answer) => (error ? reject(error) : resolve(answer)),
    );
  });
  return { requests: result.requests.total, non2xx: result.non2xx + result.errors };
}

// `--admissions N`: only N in-memory admissions, then exit; run under callgrind at N and 2N, the difference / N is the
// instructions of one admit + settle, whatever else the machine runs (BENCHMARKS.md gives the commands).
const admissionsOnly = process.argv.indexOf('--admissions');
if (admissionsOnly !== -1) {
  await admissionCost(null, Number(process.argv[admissionsOnly + 1]));
  process.exit(0);
}

const redisUrl = await startRedis();
const memoryNs = await admissionCost(null, 200_000);
const redisNs = await admissionCost(redisUrl, 5_000);
process.stdout.write(`admit + settle, CPU: memory ${(memoryNs / 1000).toFixed(2)} µs, Redis (client side) ${(redisNs / 1000).toFixed(1)} µs\n`);

const provider = track(fork(join(HERE, 'bench-mock-provider.ts'), [], { cwd: REPO, execArgv: ['--import', 'tsx'], env: bareEnv({}), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
const providerUrl = `http://127.0.0.1:${await whenReady(provider, 'mock provider', portMessage(provider))}/v1`;
const auth = { authorization: `Bearer ${BENCH_CALLER_KEY}` };
const variants: Variant[] = [
  { name: 'no callers', env: { BENCH_CALLERS: 'none' }, headers: {} },
  { name: 'limited caller, in process', env: { BENCH_CALLERS: 'limits' }, headers: auth },
  { name: 'limited caller, Redis', env: { BENCH_CALLERS: 'limits', REDIS_URL: redisUrl }, headers: auth },
];
const totals = new Map(variants.map((variant) => [variant.name, { requests: 0, cpuUs: 0, seconds: 0 }]));
for (let round = 0; round < ROUNDS; round++) {
  for (const variant of variants) {
    const { child, origin } = await startGateway(variant, providerUrl);
    await load(origin, variant.headers, 2); // warm-up
    const before = await cpuOf(child);
    const { requests, non2xx } = await load(origin, variant.headers, SECONDS);
    const cpu = (await cpuOf(child)) - before;
    if (non2xx > 0) throw new Error(`${variant.name}: ${non2xx} answers were not 2xx`);
    const total = totals.get(variant.name)!;
    total.requests += requests;
    total.cpuUs += cpu;
    total.seconds += SECONDS;
    process.stdout.write(`round ${round + 1} ${variant.name}: ${(requests / SECONDS).toFixed(0)} req/s, ${(cpu / requests).toFixed(1)} µs CPU/request\n`);
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
}
const base = totals.get('no callers')!;
const rows = variants.map((variant) => {
  const total = totals.get(variant.name)!;
  const perRequest = total.cpuUs / total.requests;
  const extra = perRequest - base.cpuUs / base.requests;
  return `| ${variant.name} | ${(total.requests / total.seconds).toFixed(0)} | ${perRequest.toFixed(1)} | ${variant === variants[0] ? '—' : `${extra >= 0 ? '+' : ''}${extra.toFixed(1)}`} |`;
});
const block = [
  '### Callers: the cost of a limited caller (`npm run bench:callers`)',
  '',
  ...describeMachine(`autocannon ${packageVersion('autocannon')}, ioredis ${packageVersion('ioredis')}, redis-server from the OS`),
  '',
  `Admission alone (admit + settle of a caller with all three limits and a budget, one after the other, in one process; this process's CPU per pair): **${(memoryNs / 1000).toFixed(2)} µs** counted in memory, **${(redisNs / 1000).toFixed(1)} µs** on the client's side of a local redis-server (two round trips, one Lua script each; Redis's own CPU not included).`,
  '',
  `End to end, non-streamed, 8 connections, ${ROUNDS} alternating rounds of ${SECONDS} s each; CPU is the gateway process's own (user + system) per request:`,
  '',
  '| Gateway | Requests/s | CPU µs/request | vs no callers |',
  '|---|---|---|---|',
  ...rows,
];
process.stdout.write(`\n${block.join('\n')}\n`);
if (WRITE) writeBlock('callers', block.join('\n'), '# Benchmarks\n');
process.exit(0);
