// Lingering after an early answer is bounded (docs/errors.md): a sender that floods, goes silent or trickles
// after its answer is cut at the byte, idle or total bound. The gateway's bounds (5 s, 30 s, 64 MiB) are shortened
// here, the ratios between senders and bounds kept, so the proof takes seconds rather than 30.
import { connect } from 'node:net';
import t from 'tap';
import { LINGER_DEFAULTS, type LingerBounds } from '../../src/caller/linger.js';
import { startGateway } from '../helpers/gateway.js';

// The silent sender learns of its cut at its second write after the answer (the first draws the reset): about two
// pauses, which stay well inside maxMs. On a loaded machine (load average 16) the cut once came a pause later (four
// writes, 7.5 s): still the idle bound's work, since only the total bound would have let it write at 10 s.
const BOUNDS: LingerBounds = { idleMs: 1500, maxMs: 10_000, maxBytes: 8 * 1024 * 1024 };

t.test('the defaults are nginx-like: 5 s silent, 30 s in all, 64 MiB read', async (t) => {
  t.same(LINGER_DEFAULTS, { idleMs: 5000, maxMs: 30_000, maxBytes: 64 * 1024 * 1024 });
});

t.test('lingering is bounded: an endless body is cut past the byte bound, a silent sender after the idle bound, a trickle after the total bound', async (t) => {
  const gateway = await startGateway({ maxBodyBytes: 64 * 1024, linger: BOUNDS });
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
  // As with the defaults: the trickle writes five times within the idle bound, the silent sender pauses well past it.
  const [flood, silent, trickle] = await Promise.all([endless(0), endless(BOUNDS.idleMs + 1000), endless(BOUNDS.idleMs / 5)]);
  // Content-Length over MAX_BODY_BYTES: answered from the headers, then the body is read and discarded.
  for (const [name, outcome] of Object.entries({ flood, silent, trickle })) t.match(outcome.received, /^HTTP\/1\.1 413 /, `${name}: the answer was read`);
  t.ok(flood.sent < BOUNDS.maxBytes + 64 * 1024 * 1024, `the flood is cut after ${flood.sent} bytes sent (reading stops past ${BOUNDS.maxBytes})`);
  t.ok(flood.ms < BOUNDS.maxMs, `by the byte bound, before the total one (${flood.ms} ms)`);
  t.ok(silent.sent < (BOUNDS.maxMs / (BOUNDS.idleMs + 1000) + 1) * 16 && silent.ms < BOUNDS.maxMs, `a sender silent for longer than the idle bound is cut long before the total one: its write after the pause meets a reset (${silent.sent} bytes, ${silent.ms} ms)`);
  t.ok(trickle.ms >= BOUNDS.maxMs - 500 && trickle.ms < BOUNDS.maxMs + 30_000, `a trickle is cut after about the total bound (${trickle.ms} ms)`);
});
