import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** How long an answered caller may go silent while still owing body bytes, before the connection is cut (nginx's lingering_timeout). */
export const LINGER_IDLE_MS = 5000;
/** How long an answered caller may go on sending the body we will not use, in all (nginx's lingering_time). */
export const LINGER_MAX_MS = 30_000;
/** How much of that body is read and thrown away, at most. */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024;

/** The three bounds together: the gateway uses the defaults; a test shortens them to prove each in seconds. */
export interface LingerBounds {
  readonly idleMs: number;
  readonly maxMs: number;
  readonly maxBytes: number;
}
export const LINGER_DEFAULTS: LingerBounds = { idleMs: LINGER_IDLE_MS, maxMs: LINGER_MAX_MS, maxBytes: LINGER_MAX_BYTES };

/**
 * nginx's lingering close, for an answer sent before the request's body has arrived (401, 413, 415, 503,
 * request_too_complex, …). Closing at once would leave the caller's unsent body unread, and the kernel answers
 * unread data with a reset that can destroy our answer before the caller reads it (EPIPE, "connection error",
 * and an SDK that retries a 413). So the answer goes out with `Connection: close`, the socket is half-closed
 * (our FIN after the answer), and the rest of the body is read and discarded until it ends; the socket is cut
 * sooner when the caller goes silent for LINGER_IDLE_MS, or past LINGER_MAX_MS or LINGER_MAX_BYTES.
 * Call before sending the answer.
 */
export function lingerAfterEarlyAnswer(req: IncomingMessage, bounds: LingerBounds = LINGER_DEFAULTS): void {
  const socket = req.socket as (Socket & { destroySoon?: () => void }) | null;
  if (!socket || socket.destroyed || req.complete) return;
  let read = 0;
  const cut = () => socket.destroy();
  const total = setTimeout(cut, bounds.maxMs).unref();
  // A loop blocked past the idle time fires this before reading what arrived meanwhile: look once more after I/O.
  const idle = setTimeout(() => {
    const before = read;
    setImmediate(() => (read === before ? cut() : idle.refresh()));
  }, bounds.idleMs).unref();
  socket.once('close', () => {
    clearTimeout(total);
    clearTimeout(idle);
  });
  // Node ends a `Connection: close` response with socket.destroySoon() (end, then destroy once flushed):
  // end only, so what the caller still sends is read below rather than answered with a reset.
  socket.destroySoon = () => socket.end();
  req.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > bounds.maxBytes) cut();
    else idle.refresh();
  });
  // The whole body is in: nothing unread is left, so closing now is clean (the answer and FIN are already queued).
  req.once('end', () => {
    socket.end();
    if (socket.writableFinished) cut();
    else socket.once('finish', cut);
  });
  req.on('error', () => {});
  req.resume();
}
