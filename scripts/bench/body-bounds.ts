// npm run bench:body — what the request-body bounds cost and what they protect:
//   1. the JSON bounds scan per request (it runs on every body), next to JSON.parse of the same text;
//   2. the built gateway under --max-old-space-size=256 taking four concurrent 16 MiB bodies of each kind:
//      answers, the longest /health answer meanwhile (how long the event loop was blocked), peak RSS.
import { Agent, createServer, request } from 'node:http';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import type { AddressInfo } from 'node:net';
import { JsonBoundsScanner } from '../../src/wire/json-bounds.js';
import { killAllOnExit } from './children.js';
import { startGatewayProcess } from './gateway-process.js';

const MiB = 1024 * 1024;
const MAX = 16 * MiB;
const CHUNK = 64 * 1024;

function typicalRequest(): Buffer {
  const messages = [{ role: 'system', content: 'You are a helpful assistant for a software team. '.repeat(10) }];
  for (let i = 0; i < 40; i++) {
    messages.push({ role: i % 2 ? 'assistant' : 'user', content: `Turn ${i}: a question or an answer with "quotes", numbers like 3.14 and a line break\n. `.repeat(5) });
  }
  const tools = Array.from({ length: 5 }, (_, i) => ({
    type: 'function',
    function: { name: `tool_${i}`, description: 'Looks something up.', parameters: { type: 'object', properties: { q: { type: 'string' }, n: { type: 'integer' } }, required: ['q'] } },
  }));
  return Buffer.from(JSON.stringify({ model: 'local/llama3.2', messages, tools, temperature: 0.2 }));
}

/** One content string filling the body to 16 MiB: `filler` repeated. */
function oneString(filler: string): Buffer {
  const head = '{"model":"local/llama3.2","messages":[{"role":"user","content":"';
  const tail = '"}]}';
  const room = MAX - Buffer.byteLength(head) - tail.length;
  const unit = Buffer.byteLength(filler);
  return Buffer.from(head + filler.repeat(Math.floor(room / unit)) + tail);
}

function emptyObjects(): Buffer {
  const head = '{"model":"local/llama3.2","messages":[';
  return Buffer.from(`${head}${'{},'.repeat(Math.floor((MAX - head.length - 2) / 3) - 1)}{}]}`);
}

/** The most heap the default bounds let one body build: 128 deep, 99,000 `{}`, a two-byte string for the rest. */
function heaviestAllowed(): Buffer {
  const head = `{"model":"local/llama3.2","deep":${'['.repeat(126)}${']'.repeat(126)},"objects":[${'{},'.repeat(98_999)}{}],"messages":[{"role":"user","content":"😀`;
  const tail = '"}]}';
  return Buffer.from(head + 'x'.repeat(MAX - Buffer.byteLength(head) - tail.length) + tail);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function scanCost(name: string, body: Buffer, rounds: number): void {
  const chunks: Buffer[] = [];
  for (let at = 0; at < body.length; at += CHUNK) chunks.push(body.subarray(at, at + CHUNK));
  const bounds = { maxDepth: 1e9, maxValues: 1e12 };
  const scanMs: number[] = [];
  for (let round = 0; round < rounds + 5; round++) {
    const started = performance.now();
    const scanner = new JsonBoundsScanner(bounds);
    for (const chunk of chunks) scanner.feed(chunk);
    if (round >= 5) scanMs.push(performance.now() - started);
  }
  const text = body.toString('utf8');
  const parseMs: number[] = [];
  for (let round = 0; round < Math.min(rounds, 20) + 2; round++) {
    const started = performance.now();
    JSON.parse(text);
    if (round >= 2) parseMs.push(performance.now() - started);
  }
  const scan = median(scanMs);
  console.log(
    `| ${name} | ${(body.length / 1024).toFixed(0)} KiB | ${scan < 1 ? `${(scan * 1000).toFixed(1)} µs` : `${scan.toFixed(1)} ms`} | ${((scan * 1e6) / body.length).toFixed(2)} | ${median(parseMs).toFixed(2)} ms |`,
  );
}

function post(origin: string, body: Buffer, agent: Agent): Promise<number> {
  return new Promise((resolve) => {
    const req = request(`${origin}/v1/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0)); // 0: the connection failed (the gateway died)
    req.end(body);
  });
}

/** Polls /health every 5 ms until `done` settles; the longest answer is how long the event loop was held. */
async function longestHealth(origin: string, done: Promise<unknown>): Promise<number> {
  let longest = 0;
  let finished = false;
  void done.finally(() => (finished = true));
  while (!finished) {
    const started = performance.now();
    await fetch(`${origin}/health`).then((response) => response.arrayBuffer(), () => undefined);
    longest = Math.max(longest, performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return longest;
}

function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

async function main(): Promise<void> {
  killAllOnExit('bench:body');
  console.log(`Machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores; Node ${process.version}\n`);
  console.log('JSON bounds scan, bodies fed in 64 KiB chunks (median), next to JSON.parse of the same text:\n');
  console.log('| Body | Size | Scan | ns per byte | JSON.parse |\n|---|---|---|---|---|');
  scanCost('typical request (41 messages, 5 tools)', typicalRequest(), 2000);
  scanCost('16 MiB, one ASCII string', oneString('x'), 15);
  scanCost('16 MiB, one string with escapes', oneString('say \\"hi\\"\\n'), 15);
  scanCost('16 MiB, Cyrillic text', oneString('Привет, мир. '), 15);
  scanCost('16 MiB of `{}` (unbounded scan)', emptyObjects(), 5);

  const provider = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        const body = JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'llama3.2', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] });
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      }, 1000),
    );
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  const gateway = await startGatewayProcess({
    LOCAL_LLM_BASE_URL: `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`,
    NODE_OPTIONS: '--max-old-space-size=256',
    LOG_LEVEL: 'warn',
  });
  console.log('\nThe gateway (dist/server.js, --max-old-space-size=256, default limits), four concurrent bodies of each kind, provider answering after 1 s:\n');
  console.log('| Bodies | Answers | Longest /health meanwhile | Gateway peak RSS so far |\n|---|---|---|---|');
  const scenarios: [string, Buffer][] = [
    ['4 × 16 MiB of `{}` (issue 10)', emptyObjects()],
    ['4 × heaviest allowed (128 deep, 99,000 `{}`, two-byte string)', heaviestAllowed()],
    ['4 × 16 MiB, one ASCII string', oneString('x')],
    ['4 × 16 MiB, Cyrillic text', oneString('Привет, мир. ')],
  ];
  for (const [name, body] of scenarios) {
    const agent = new Agent({ keepAlive: false });
    const answers = Promise.all([1, 2, 3, 4].map(() => post(gateway.origin, body, agent)));
    const longest = await longestHealth(gateway.origin, answers);
    const statuses = (await answers).join(', ');
    console.log(`| ${name} | ${statuses} | ${longest.toFixed(0)} ms | ${peakRssMiB(gateway.pid).toFixed(0)} MiB |`);
  }
  const after = await fetch(`${gateway.origin}/health`).then((response) => response.status, () => 0);
  console.log(`\n/health after: ${after}`);
  await gateway.stop();
  provider.close();
}

await main();
