// Streaming cost of the gateway per event: `npm run bench:stream` (needs `npm run build` first).
// A local mock provider streams 1,000 OpenAI chunks per request; the gateway runs as `node dist/server.js`
// in its own process; its CPU time (from /proc) over many streams, divided by the events relayed,
// is the cost per event. The provider's and the client's CPU are not counted.
// BENCH_OBFUSCATION=1 pads each chunk as OpenAI does (after its usage) unless a caller turns it off.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { killAllOnExit } from './children.js';
import { startGatewayProcess } from './gateway-process.js';

killAllOnExit('bench:stream');

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 1000);
const PADDED = process.env['BENCH_OBFUSCATION'] === '1';
const STREAMS = Number(process.env['BENCH_STREAMS'] ?? 300);
const WARMUP = 30;
const CONCURRENCY = 4;

/** As OpenAI streams: with include_usage, every chunk carries "usage":null and a usage-only chunk comes last. */
function streamBody(events: number, withUsage: boolean): Buffer {
  const frames: string[] = [];
  for (let i = 0; i < events; i++) {
    const chunk = {
      id: 'chatcmpl-bench',
      object: 'chat.completion.chunk',
      created: 1763700000,
      model: 'llama3.2',
      system_fingerprint: 'fp_bench',
      choices: [{ index: 0, delta: { content: ` token${i}` }, logprobs: null, finish_reason: null }],
      ...(withUsage ? { usage: null } : {}),
      ...(PADDED ? { obfuscation: 'UrWxwbIG'.slice(0, i % 9) } : {}),
    };
    frames.push(`data: ${JSON.stringify(chunk)}\n\n`);
  }
  if (withUsage) frames.push(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1763700000,"model":"llama3.2","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":${events},"total_tokens":${events + 5}}}\n\n`);
  frames.push('data: [DONE]\n\n');
  return Buffer.from(frames.join(''));
}

const bodies = { plain: streamBody(EVENTS, false), withUsage: streamBody(EVENTS, true) };
const provider = createServer((req, res) => {
  let request = '';
  req.on('data', (piece: Buffer) => (request += piece.toString()));
  req.on('end', () => {
    const body = request.includes('"include_usage":true') ? bodies.withUsage : bodies.plain;
    const perEvent = Math.ceil(body.length / (EVENTS + 1));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    // Provider-sized writes: a few events per write, as a real token stream arrives.
    for (let offset = 0; offset < body.length; offset += perEvent * 4) res.write(body.subarray(offset, offset + perEvent * 4));
    res.end();
  });
});
await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
const providerOrigin = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;

const gateway = await startGatewayProcess({ LOCAL_LLM_BASE_URL: `${providerOrigin}/v1` });
// As ops run it: stream_usage is on, so the gateway asks for usage and hides it from this caller.
const request = JSON.stringify({ model: 'local/llama3.2', messages: [{ role: 'user', content: 'count' }], stream: true });

async function runStreams(count: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next++ < count) {
      const response = await fetch(`${gateway.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: request });
      const text = await response.text();
      if (!text.endsWith('data: [DONE]\n\n')) throw new Error('a benchmark stream did not complete');
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

await runStreams(WARMUP);
const cpuBefore = gateway.cpuMicros();
const started = performance.now();
await runStreams(STREAMS);
const elapsedMs = performance.now() - started;
const cpuMicros = gateway.cpuMicros() - cpuBefore;
const rss = gateway.rssBytes();
await gateway.stop();
provider.close();

const eventsRelayed = STREAMS * (EVENTS + 1);
console.log(`machine: ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, Node ${process.version}`);
console.log(`streams: ${STREAMS} x ${EVENTS} events (+[DONE])${PADDED ? ', padded as OpenAI pads them' : ''}, concurrency ${CONCURRENCY}, ${(elapsedMs / 1000).toFixed(1)} s`);
console.log(`gateway CPU per event: ${(cpuMicros / eventsRelayed).toFixed(2)} µs  (per 1,000-event stream: ${(cpuMicros / STREAMS / 1000).toFixed(2)} ms)`);
console.log(`gateway RSS after run: ${(rss / 1024 / 1024).toFixed(0)} MiB`);
