import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { compileRoutes } from '../../scripts/routes/compile-routes.js';
import { createGateway, type AppOptions } from '../../src/app.js';
import { envelopeOf, GATEWAY_ROUTES, PROVIDER_KEY } from '../helpers/gateway.js';
import { completionBody, sendJson, startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.js';
import { rawExchange } from '../helpers/raw-http.js';

type Limits = Pick<AppOptions, 'maxBodyBytes' | 'maxJsonDepth' | 'maxJsonValues' | 'maxBodyBytesInFlight' | 'callerKeys'>;

/** The real gateway on its own node:http server, wired as server.ts wires it (checkContinue included). */
async function startBoundedGateway(t: Test, upstream: MockUpstream, limits: Partial<Limits> = {}) {
  const compiled = compileRoutes(GATEWAY_ROUTES);
  if (!compiled.ok) throw new Error('test routes do not compile');
  const gateway = createGateway(compiled.tables, {
    env: { MOCK_BASE_URL: `${upstream.origin}/v1`, MOCK_API_KEY: PROVIDER_KEY },
    version: '0.0.0-test',
    maxBodyBytes: 16 * 1024 * 1024,
    maxUpstreamBodyBytes: 1024 * 1024,
    callerKeys: [],
    logger: pino({ level: 'silent' }),
    ...limits,
  });
  const server = createServer(gateway.app);
  server.on('checkContinue', gateway.checkContinue);
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        gateway.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { origin, post };
}

async function answeringProvider(t: Test) {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('gpt-4o-2024-11-20')));
  t.teardown(() => upstream.close());
  return upstream;
}

const ask = (extra: string) => `{"model":"mock/gpt-4o","messages":[{"role":"user","content":"hi"}]${extra}}`;

t.test('a body of millions of tiny values is refused before it is parsed, naming the parameter', async (t) => {
  const upstream = await answeringProvider(t);
  const gateway = await startBoundedGateway(t, upstream);
  // 300,000 empty objects: 900 KB of text, which JSON.parse would have turned into ~20 MB of heap.
  const response = await gateway.post(`{"model":"mock/gpt-4o","messages":[${'{},'.repeat(300_000)}{}]}`);
  t.equal(response.status, 400);
  t.equal(response.headers.get('x-should-retry'), 'false');
  const error = await envelopeOf(response);
  t.match(error, { gateway_code: 'request_too_complex', code: 'request_too_complex', type: 'invalid_request_error', param: 'messages', origin: 'gateway' });
  t.match(error['message'], /more than 200000 JSON values \(in 'messages'\) \(MAX_JSON_VALUES\)/);
  t.equal(upstream.requests.length, 0, 'nothing reached the provider');
});

t.test('nesting is allowed up to MAX_JSON_DEPTH and refused one level deeper', async (t) => {
  const upstream = await answeringProvider(t);
  const gateway = await startBoundedGateway(t, upstream, { maxJsonDepth: 40 });
  // The body object is level 1, so metadata's value may nest 39 levels.
  const atLimit = await gateway.post(ask(`,"metadata":${'['.repeat(39)}${']'.repeat(39)}`));
  t.equal(atLimit.status, 200);
  const over = await gateway.post(ask(`,"metadata":${'['.repeat(40)}${']'.repeat(40)}`));
  t.equal(over.status, 400);
  t.match(await envelopeOf(over), { gateway_code: 'request_too_complex', param: 'metadata', message: /more than 40 levels deep \(in 'metadata'\)/ });
  t.equal(upstream.requests.length, 1);
});

t.test('a large body of long strings and many values within the bounds goes through byte for byte', async (t) => {
  const upstream = await answeringProvider(t);
  const gateway = await startBoundedGateway(t, upstream);
  const content = '😀 ' + 'Привет, мир. '.repeat(200_000);
  const tools = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ type: 'function', function: { name: `f${i}`, parameters: { type: 'object' } } })));
  const body = `{"model":"mock/gpt-4o","messages":[{"role":"user","content":${JSON.stringify(content)}}],"tools":${tools}}`;
  const response = await gateway.post(body);
  t.equal(response.status, 200);
  t.equal(upstream.requests[0]?.body, body.replace('"mock/gpt-4o"', '"gpt-4o-2024-11-20"'));
});

/** A provider that answers each request only when the test says so. */
async function heldProvider(t: Test) {
  const waiting: ServerResponse[] = [];
  const upstream = await startMockUpstream((_req, res) => void waiting.push(res));
  t.teardown(() => upstream.close());
  const arrived = async (count: number) => {
    while (upstream.requests.length < count) await new Promise((resolve) => setTimeout(resolve, 10));
  };
  const answerAll = () => waiting.splice(0).forEach((res) => sendJson(res, 200, completionBody('gpt-4o-2024-11-20')));
  return { upstream, arrived, answerAll };
}

const padded = (bytes: number) => ask(`,"pad":"${'x'.repeat(bytes)}"`);

t.test('bodies in flight beyond MAX_BODY_BYTES_IN_FLIGHT are answered 503 overloaded, and the budget comes back', async (t) => {
  const provider = await heldProvider(t);
  const gateway = await startBoundedGateway(t, provider.upstream, { maxBodyBytes: 100_000, maxJsonValues: 1000, maxBodyBytesInFlight: 250_000 });
  const first = gateway.post(padded(95_000));
  const second = gateway.post(padded(95_000));
  await provider.arrived(2);
  // Two bodies of ~95 KB hold ~190 KB of 250 KB: a third no longer fits.
  const declared = await gateway.post(padded(95_000));
  t.equal(declared.status, 503);
  t.equal(declared.headers.get('x-should-retry'), 'true');
  t.equal(declared.headers.get('retry-after'), '1');
  t.match(await envelopeOf(declared), { gateway_code: 'overloaded', type: 'server_error', code: 'overloaded', param: null });

  // Without Content-Length the budget is charged as the bytes arrive.
  const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(`${gateway.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (piece: Buffer) => (text += piece.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    const body = padded(95_000);
    for (let at = 0; at < body.length; at += 10_000) req.write(body.slice(at, at + 10_000));
    req.end();
  });
  t.equal(chunked.status, 503);
  t.match(JSON.parse(chunked.body), { error: { gateway_code: 'overloaded' } });
  t.equal(provider.upstream.requests.length, 2, 'neither refused body reached the provider');

  provider.answerAll();
  t.equal((await first).status, 200);
  t.equal((await second).status, 200);
  const again = gateway.post(padded(95_000));
  await provider.arrived(3);
  provider.answerAll();
  t.equal((await again).status, 200, 'answered requests gave their share back');
});

t.test('a caller that leaves gives its share of the budget back', async (t) => {
  const provider = await heldProvider(t);
  const gateway = await startBoundedGateway(t, provider.upstream, { maxBodyBytes: 100_000, maxJsonValues: 1000, maxBodyBytesInFlight: 200_000 });
  const stays = gateway.post(padded(95_000));
  const leaving = new AbortController();
  const left = fetch(`${gateway.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: padded(95_000),
    signal: leaving.signal,
  }).catch(() => 'left');
  await provider.arrived(2);
  t.equal((await gateway.post(padded(95_000))).status, 503, 'full while both are held');
  leaving.abort();
  t.equal(await left, 'left');
  // The gateway hangs up on the provider when the caller's response closes, which is when the share comes back.
  while (provider.upstream.closedConnections < 1) await new Promise((resolve) => setTimeout(resolve, 10));
  const again = gateway.post(padded(95_000));
  await provider.arrived(3);
  provider.answerAll();
  t.equal((await again).status, 200);
  t.equal((await stays).status, 200);
});

t.test('with Expect: 100-continue, what the headers already refuse is answered without inviting the body', async (t) => {
  const upstream = await answeringProvider(t);
  const gateway = await startBoundedGateway(t, upstream, { maxBodyBytes: 1000, maxJsonValues: 10, maxBodyBytesInFlight: 5000 });
  const head = (headers: string) => `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n${headers}\r\n`;
  const cases = [
    { headers: 'Content-Type: application/json\r\nContent-Length: 5000\r\n', status: 413, code: 'request_too_large' },
    { headers: 'Content-Type: text/plain\r\nContent-Length: 10\r\n', status: 415, code: 'unsupported_media_type' },
    { headers: 'Content-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: 10\r\n', status: 415, code: 'unsupported_media_type' },
  ];
  for (const { headers, status, code } of cases) {
    const exchange = await rawExchange(gateway.origin, head(headers), 'x'.repeat(10));
    t.same(exchange.statuses, [status], `${code}: no 100 Continue before the ${status}`);
    t.match(exchange.received, new RegExp(`"gateway_code":"${code}"`));
    t.match(exchange.received, /\r\nconnection: close\r\n/i, 'the unread body is not awaited on this connection');
  }
  const body = ask('');
  const accepted = await rawExchange(gateway.origin, head(`Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`), body);
  t.same(accepted.statuses, [100, 200], 'a request that passes is invited, then answered');
  t.match(accepted.received, /"model":"mock\/gpt-4o"/);
});

t.test('with Expect: 100-continue and caller keys, a caller without a key is refused before sending its body', async (t) => {
  const upstream = await answeringProvider(t);
  const gateway = await startBoundedGateway(t, upstream, { callerKeys: ['caller-key-1'] });
  const exchange = await rawExchange(
    gateway.origin,
    'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n',
    'x'.repeat(10),
  );
  t.same(exchange.statuses, [401]);
  t.match(exchange.received, /"gateway_code":"unauthorized"/);
});
