import { connect } from 'node:net';
import t from 'tap';
import { logLinesOf, startServerProcess, waitForOutput } from './server-process.js';

/** A raw answer read from a socket until the gateway closes it. */
interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Writes `parts` (a number is a pause in ms) on a fresh connection and reads until the server closes it. */
function exchange(port: number, parts: readonly (string | number)[]): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (piece: string) => (received += piece));
    socket.on('error', reject);
    socket.on('close', () => {
      const split = received.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = received.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine ?? '')?.[1]), headers, body: received.slice(split + 4) });
    });
    void (async () => {
      for (const part of parts) {
        if (typeof part === 'number') await new Promise((r) => setTimeout(r, part));
        else if (!socket.destroyed) socket.write(part);
      }
    })();
  });
}

const post = 'POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n';

const cases: { name: string; parts: (string | number)[]; status: number; gatewayCode: string; message: RegExp; retry: boolean }[] = [
  { name: 'a request line that is not HTTP', parts: ['GARBAGE\r\n\r\n'], status: 400, gatewayCode: 'malformed_request', message: /not valid HTTP\/1\.1 \(HPE_INVALID_METHOD\)/, retry: false },
  { name: 'a header name with a space', parts: ['GET /health HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n'], status: 400, gatewayCode: 'malformed_request', message: /HPE_INVALID_HEADER_TOKEN/, retry: false },
  { name: 'an HTTP/1.1 request without Host', parts: ['GET /health HTTP/1.1\r\n\r\n'], status: 400, gatewayCode: 'malformed_request', message: /Host header/, retry: false },
  { name: 'HTTP/2 without TLS', parts: ['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'], status: 400, gatewayCode: 'malformed_request', message: /HTTP\/2/, retry: false },
  { name: 'a chunk size that is not hex, mid-body', parts: [`${post}Transfer-Encoding: chunked\r\n\r\n`, 200, 'zz\r\n{}\r\n0\r\n\r\n'], status: 400, gatewayCode: 'malformed_request', message: /HPE_INVALID_CHUNK_SIZE/, retry: false },
  { name: 'headers over the size limit', parts: [`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`], status: 431, gatewayCode: 'headers_too_large', message: /16384 bytes/, retry: false },
  { name: 'chunk extensions over the size limit', parts: [`${post}Transfer-Encoding: chunked\r\n\r\n`, 200, `2;${'a'.repeat(20_000)}\r\n{}\r\n0\r\n\r\n`], status: 413, gatewayCode: 'request_too_large', message: /chunk extensions/, retry: false },
  { name: 'headers not finished within HEADERS_TIMEOUT_MS', parts: ['GET /health HTTP/1.1\r\nHost: x\r\n'], status: 408, gatewayCode: 'request_timeout', message: /1000 ms.*2000 ms/, retry: true },
  { name: 'a body not finished within REQUEST_TIMEOUT_MS', parts: [`${post}Content-Length: 100\r\n\r\n{"mo`], status: 408, gatewayCode: 'request_timeout', message: /1000 ms.*2000 ms/, retry: true },
  { name: 'CONNECT (the gateway is no proxy)', parts: ['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'], status: 405, gatewayCode: 'method_not_allowed', message: /not a proxy/, retry: false },
];

t.test("Node's own early answers come in the gateway's envelope", async (t) => {
  const server = await startServerProcess({ HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '2000' });
  t.teardown(() => server.child.kill('SIGKILL'));
  const port = Number(new URL(server.origin).port);
  const answers = await Promise.all(cases.map((c) => exchange(port, c.parts)));
  for (const [i, { name, status, gatewayCode, message, retry }] of cases.entries()) {
    const answer = answers[i]!;
    t.test(name, async (t) => {
      t.equal(answer.status, status);
      t.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
      t.equal(answer.headers['content-length'], String(Buffer.byteLength(answer.body)));
      t.equal(answer.headers['connection'], 'close');
      t.equal(answer.headers['x-should-retry'], String(retry));
      t.match(answer.headers['x-request-id'], /^req_[0-9a-f]{32}$/);
      const body = JSON.parse(answer.body) as { error: Record<string, unknown> };
      t.strictSame(Object.keys(body), ['error']);
      t.strictSame(Object.keys(body.error), ['message', 'type', 'code', 'param', 'origin', 'gateway_code', 'provider', 'provider_status', 'provider_code']);
      t.match(body.error, { gateway_code: gatewayCode, origin: 'gateway', type: 'invalid_request_error', param: null, provider: null, message });
    });
  }
  const health = await fetch(`${server.origin}/health`);
  t.equal(health.status, 200, 'the gateway still answers');

  // A request already handed to the routes (its body being read) keeps its log line, with what it was answered.
  const routed = cases.flatMap((c, i) => (c.parts.length > 1 || c.name.includes('Host') || c.name.includes('REQUEST_TIMEOUT') ? [{ c, answer: answers[i]! }] : []));
  t.equal(routed.length, 4);
  const logged = await waitForOutput(server, (output) => {
    // Not the worker's own /health at start-up (request_id self-check).
    const lines = logLinesOf(output).filter((line) => line['msg'] === 'request' && line['request_id'] !== 'self-check');
    return lines.length >= routed.length + 1 ? lines : undefined;
  });
  for (const { c, answer } of routed) {
    t.match(logged.find((line) => line['request_id'] === answer.headers['x-request-id']), { status: c.status, gateway_code: c.gatewayCode }, `${c.name}: logged`);
  }
});
