// Memory under slow callers: `npm run bench:slow-readers` (needs `npm run build` first).
// 200 callers stream at once from a provider that sends as fast as it can; each caller reads only a
// trickle. With backpressure the gateway stops reading from the provider, so its RSS stays near its
// idle size; without it, the gateway would hold the provider's whole output (200 x 2 MB).
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { drained } from '../../src/engine/drained.js';
import { startGatewayProcess } from './gateway-process.js';

const STREAMS = Number(process.env['BENCH_STREAMS'] ?? 200);
const EVENTS_PER_STREAM = Number(process.env['BENCH_EVENTS'] ?? 10_000);
const HOLD_MS = Number(process.env['BENCH_HOLD_MS'] ?? 10_000);

const event = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'llama3.2', choices: [{ index: 0, delta: { content: 'x'.repeat(900) } }] })}\n\n`;
let providerBytesSent = 0;
const provider = createServer((req, res) => {
  req.resume();
  req.on('end', async () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < EVENTS_PER_STREAM && !res.destroyed; i++) {
      providerBytesSent += event.length;
      if (!res.write(event)) await drained(res);
    }
    res.end('data: [DONE]\n\n');
  });
});
await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
const providerOrigin = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
const gateway = await startGatewayProcess({ LOCAL_LLM_BASE_URL: `${providerOrigin}/v1` });
const body = JSON.stringify({ model: 'local/llama3.2', messages: [{ role: 'user', content: 'x' }], stream: true });

await sleep(500);
const idleRss = gateway.rssBytes();
let peakRss = idleRss;
let callerBytes = 0;
const streams = Array.from({ length: STREAMS }, () => {
  return new Promise<void>((resolve, reject) => {
    const req = request(`${gateway.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      // A trickle: 4 KiB every 100 ms per caller, then everything once the hold is over. A short stream
      // may end during the trickle, so 'end' is listened for from the start.
      res.on('end', resolve);
      res.pause();
      const trickle = setInterval(() => {
        const piece = res.read(4096) as Buffer | null;
        if (piece) callerBytes += piece.length;
      }, 100);
      setTimeout(() => {
        clearInterval(trickle);
        res.on('data', (piece: Buffer) => (callerBytes += piece.length));
        res.resume();
      }, HOLD_MS);
    });
    req.on('error', reject);
    req.end(body);
  });
});
const sampler = setInterval(() => (peakRss = Math.max(peakRss, gateway.rssBytes())), 100);
await sleep(HOLD_MS - 500);
const providerBytesDuringHold = providerBytesSent;
await Promise.all(streams);
clearInterval(sampler);
await gateway.stop();
provider.close();

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
console.log(`machine: ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, Node ${process.version}`);
console.log(`${STREAMS} slow callers, ${mib(event.length * EVENTS_PER_STREAM)} each from the provider, held ${HOLD_MS / 1000} s`);
console.log(`provider could send during the hold: ${mib(providerBytesDuringHold)} of ${mib(STREAMS * event.length * EVENTS_PER_STREAM)}`);
console.log(`gateway RSS: idle ${mib(idleRss)}, peak ${mib(peakRss)} (+${mib(peakRss - idleRss)}); callers received ${mib(callerBytes)} in all`);
