// What slow callers cost: `npm run bench:slow-readers` (needs `npm run build` first). 200 callers stream at once
// from a provider that sends as fast as it may; each caller reads only a trickle (4 KiB every 100 ms) for 10 s,
// then the rest. With backpressure the gateway stops reading from the provider once a caller's socket is full, so
// a paused stream holds only what the stream and socket high-water marks let in, not the whole answer.
//
// Measured: with every stream paused at the end of the hold, how many streams the provider could no longer write
// to (backpressure reached it), and what the gateway's heap holds per paused stream (a heap snapshot, which
// collects garbage first, minus one taken idle; ArrayBuffer contents included). Exits 1 when that is above
// HELD_CEILING_KIB, or when backpressure did not reach the provider on every stream (the answers were then small
// enough for the kernel's socket buffers to take whole, and nothing was measured: raise BENCH_EVENTS). Peak RSS
// is reported beside: it includes the garbage of moving the answers through at full speed until the kernel's
// buffers (tens of MB per loopback socket) are full.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { killAllOnExit } from './children.js';
import { drained } from './drained.js';
import { startGatewayProcess } from './gateway-process.js';
import { heapGrowthPerStream, takeHeapSnapshot } from './heap-breakdown.js';

killAllOnExit('bench:slow-readers');

const STREAMS = Number(process.env['BENCH_STREAMS'] ?? 200);
const EVENTS_PER_STREAM = Number(process.env['BENCH_EVENTS'] ?? 6_000);
const HOLD_MS = Number(process.env['BENCH_HOLD_MS'] ?? 10_000);
/**
 * What one paused stream may hold (README, "Memory with slow callers"): two reads from the provider, in its
 * response's buffer and in got's (up to 64 KiB each: a read that crosses the 16 KiB high-water mark is still
 * taken), the caller's pending write of one read's events and the socket buffer behind it (up to 64 KiB each),
 * and one unfinished event.
 */
const HELD_CEILING_KIB = 4 * 64 + 16;

const event = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'llama3.2', choices: [{ index: 0, delta: { content: 'x'.repeat(8000) } }] })}\n\n`;
const answerBytes = event.length * EVENTS_PER_STREAM;
let providerBytesSent = 0;
let providerBlocked = 0;
const provider = createServer((req, res) => {
  req.resume();
  req.on('end', async () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < EVENTS_PER_STREAM && !res.destroyed; i++) {
      providerBytesSent += event.length;
      if (!res.write(event)) {
        providerBlocked++;
        await drained(res);
        providerBlocked--;
      }
    }
    res.end('data: [DONE]\n\n');
  });
});
await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
const providerOrigin = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
const heapDir = mkdtempSync(join(os.tmpdir(), 'slow-readers-heap-'));
const gateway = await startGatewayProcess({ LOCAL_LLM_BASE_URL: `${providerOrigin}/v1` }, ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${heapDir}`]);
const body = JSON.stringify({ model: 'local/llama3.2', messages: [{ role: 'user', content: 'x' }], stream: true });

await sleep(500);
const idleRss = gateway.rssBytes();
const idleHeap = await takeHeapSnapshot(gateway.pid, heapDir);
let peakRss = idleRss;
let callerBytes = 0;
let release: () => void = () => {};
const released = new Promise<void>((resolve) => (release = resolve));
const streams = Array.from({ length: STREAMS }, () => {
  return new Promise<boolean>((resolve, reject) => {
    const req = request(`${gateway.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      // A trickle: 4 KiB every 100 ms per caller, then everything once released. 'end' is listened for from the start.
      let tail = '';
      res.on('end', () => resolve(tail.endsWith('data: [DONE]\n\n')));
      res.pause();
      const take = (piece: Buffer) => {
        callerBytes += piece.length;
        tail = (tail + piece.toString('latin1')).slice(-32);
      };
      const trickle = setInterval(() => {
        const piece = res.read(4096) as Buffer | null;
        if (piece) take(piece);
      }, 100);
      void released.then(() => {
        clearInterval(trickle);
        res.on('data', take);
        res.resume();
      });
    });
    req.on('error', reject);
    req.end(body);
  });
});
const sampler = setInterval(() => (peakRss = Math.max(peakRss, gateway.rssBytes())), 100);
await sleep(HOLD_MS);
const blockedAtHold = providerBlocked;
const sentAtHold = providerBytesSent;
const rssAtHold = gateway.rssBytes();
const held = heapGrowthPerStream(idleHeap, await takeHeapSnapshot(gateway.pid, heapDir), STREAMS, 10);
release();
const whole = (await Promise.all(streams)).filter(Boolean).length;
clearInterval(sampler);
await gateway.stop();
provider.close();
rmSync(heapDir, { recursive: true, force: true });

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
console.log(`machine: ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, Node ${process.version}`);
console.log(`${STREAMS} slow callers, ${mib(answerBytes)} each from the provider, each reading 4 KiB per 100 ms for ${HOLD_MS / 1000} s, then the rest`);
console.log(`at the end of the hold: the provider had sent ${mib(sentAtHold)} of ${mib(STREAMS * answerBytes)} and was blocked (backpressure) on ${blockedAtHold} of ${STREAMS} streams`);
console.log(`gateway heap held per paused stream (snapshot minus idle): ${kib(held.total)} (ceiling ${HELD_CEILING_KIB} KiB); largest classes per stream:`);
for (const [name, bytes] of held.rows) console.log(`  ${kib(bytes).padStart(10)}  ${name}`);
console.log(`gateway RSS: idle ${mib(idleRss)}, at the end of the hold ${mib(rssAtHold)}, peak ${mib(peakRss)} (+${mib(peakRss - idleRss)}, garbage of the answers moved at full speed included)`);
console.log(`callers received ${mib(callerBytes)} in all; ${whole} of ${STREAMS} streams ended with [DONE]`);

const problems = [
  ...(blockedAtHold < STREAMS ? [`backpressure reached the provider on only ${blockedAtHold} of ${STREAMS} streams: the kernel's buffers took the rest whole; raise BENCH_EVENTS`] : []),
  ...(held.total > HELD_CEILING_KIB * 1024 ? [`each paused stream holds ${kib(held.total)} in the gateway, above the ${HELD_CEILING_KIB} KiB ceiling`] : []),
  ...(whole < STREAMS ? [`${STREAMS - whole} streams did not end with [DONE]`] : []),
];
for (const problem of problems) console.error(`bench:slow-readers: FAILED: ${problem}`);
process.exit(problems.length ? 1 : 0);
