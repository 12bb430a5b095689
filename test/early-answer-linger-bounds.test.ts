// Lingering after an early answer is bounded (README, Limits): a sender that floods, goes silent or trickles
// after its answer is cut at LINGER_MAX_BYTES, LINGER_IDLE_MS or LINGER_MAX_MS (this file takes ~30 s).
import { connect } from 'node:net';
import t from 'tap';
import { LINGER_IDLE_MS, LINGER_MAX_BYTES, LINGER_MAX_MS } from '../src/caller/linger.js';
import { startGateway } from './helpers/gateway.js';

t.test('lingering is bounded: an endless body is cut past LINGER_MAX_BYTES, a silent sender after LINGER_IDLE_MS, a trickle after LINGER_MAX_MS', async (t) => {
  const gateway = await startGateway({ maxBodyBytes: 64 * 1024 });
  t.teardown(() => gateway.close());
  const { hostname, port } = new URL(gateway.origin);
  /** Sends an endless body: as fast as it can (pauseMs 0), or 16 bytes every pauseMs; it learns of the cut at its next write. */
  const endless = (pauseMs: number) =>
    new Promise<{ received: string; sent: number; ms: number }>((resolve) => {
      const started = Date.now();
      // A sender that keeps sending after our answer and FIN (a plain socket would stop at the FIN).
      const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
      let received = '';
      let sent = 0;
      const piece = Buffer.alloc(pauseMs === 0 ? 1024 * 1024 : 16, 0x61);
      socket.on('data', (data: Buffer) => (received += data.toString('latin1')));
      socket.on('error', () => {});
      socket.on('close', () => resolve({ received, sent, ms: Date.now() - started }));
      socket.write('POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 999999999999\r\n\r\n');
      const pump = () => {
        if (socket.destroyed || socket.writableEnded) return;
        if (Date.now() - started > 90_000) return void socket.destroy();
        sent += piece.length;
        const more = socket.write(piece);
        if (pauseMs > 0) setTimeout(pump, pauseMs);
        else if (more) setImmediate(pump);
        else socket.once('drain', pump);
      };
      pump();
    });
  const [flood, silent, trickle] = await Promise.all([endless(0), endless(LINGER_IDLE_MS + 2000), endless(1000)]);
  // Content-Length over MAX_BODY_BYTES: answered from the headers, then the body is read and discarded.
  for (const [name, outcome] of Object.entries({ flood, silent, trickle })) t.match(outcome.received, /^HTTP\/1\.1 413 /, `${name}: the answer was read`);
  t.ok(flood.sent < LINGER_MAX_BYTES + 64 * 1024 * 1024, `the flood is cut after ${flood.sent} bytes sent (reading stops past ${LINGER_MAX_BYTES})`);
  t.ok(silent.sent <= 3 * 16 && silent.ms < LINGER_MAX_MS, `a sender silent for longer than LINGER_IDLE_MS is cut long before LINGER_MAX_MS: its write after the pause meets a reset (${silent.sent} bytes, ${silent.ms} ms)`);
  t.ok(trickle.ms >= LINGER_MAX_MS - 500 && trickle.ms < LINGER_MAX_MS + 30_000, `a trickle is cut after about LINGER_MAX_MS (${trickle.ms} ms)`);
});
