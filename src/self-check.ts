import { request, type Server } from 'node:http';
import { duplexPair } from 'node:stream';

/** A worker that has not answered its own /health in this long is not ready. */
const SELF_CHECK_TIMEOUT_MS = 10_000;

/**
 * GET /health through this very server, before it listens: the request goes through Node's HTTP parser, the app and
 * back over an in-memory connection (http.Server accepts any Duplex as a connection), so the answer is this
 * process's own. Asking the shared port instead could reach another worker. Resolves with an error message, or null
 * when /health answered 200.
 */
export function selfCheckHealth(server: Server): Promise<string | null> {
  const [inside, outside] = duplexPair();
  server.emit('connection', inside);
  return new Promise((resolve) => {
    const settle = (problem: string | null) => {
      outside.destroy();
      inside.destroy();
      resolve(problem);
    };
    const ask = request(
      {
        createConnection: () => outside,
        path: '/health',
        headers: { host: 'localhost', connection: 'close', 'x-request-id': 'self-check' },
        timeout: SELF_CHECK_TIMEOUT_MS,
      },
      (answer) => {
        answer.resume();
        answer.on('end', () => settle(answer.statusCode === 200 ? null : `its own /health answered ${answer.statusCode}`));
        answer.on('error', (error) => settle(`its own /health failed: ${error.message}`));
      },
    );
    ask.on('timeout', () => ask.destroy(new Error(`no answer within ${SELF_CHECK_TIMEOUT_MS} ms`)));
    ask.on('error', (error) => settle(`its own /health failed: ${error.message}`));
    ask.end();
  });
}
