import { createServer, type Socket } from 'node:net';
import t from 'tap';
import { envelopeOf, startGateway } from '../helpers/gateway.js';
import { sendJson, startMockUpstream } from '../helpers/mock-upstream.js';

const ask = { model: 'mock/gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }] };

t.test('provider errors are mapped through the error table with the provider fields filled', async (t) => {
  let next: { status: number; body: unknown; headers?: Record<string, string> } = { status: 500, body: '' };
  const upstream = await startMockUpstream((_req, res) => sendJson(res, next.status, next.body, next.headers));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  const cases = [
    {
      name: '402 quota (spec sample)',
      upstream: { status: 402, body: { error: { message: 'You exceeded your current quota.', type: 'insufficient_quota', code: 'insufficient_quota' } } },
      status: 402,
      retry: 'false',
      error: { message: 'You exceeded your current quota.', type: 'invalid_request_error', code: 'insufficient_quota', origin: 'gateway', gateway_code: 'quota_exceeded', provider: 'mock', provider_status: 402, provider_code: 'insufficient_quota', param: null },
    },
    {
      name: '401 is the gateway misconfigured, not the caller',
      upstream: { status: 401, body: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } } },
      status: 502,
      retry: 'false',
      error: { type: 'server_error', code: 'upstream_auth_failed', gateway_code: 'provider_auth_failed', provider_status: 401, provider_code: 'invalid_api_key' },
    },
    {
      name: '500 follows the class rule and is retryable',
      upstream: { status: 503, body: { error: { message: 'overloaded', type: 'server_error' } } },
      status: 502,
      retry: 'true',
      error: { gateway_code: 'provider_error', provider_status: 503, provider_code: 'server_error', message: 'overloaded' },
    },
    {
      name: 'Anthropic-style body',
      upstream: { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } } },
      status: 400,
      retry: 'false',
      error: { gateway_code: 'provider_rejected_request', provider_code: 'invalid_request_error', message: 'max_tokens: Field required' },
    },
    {
      name: 'OpenRouter numeric code becomes a string',
      upstream: { status: 402, body: { error: { message: 'Insufficient credits', code: 402 } } },
      status: 402,
      retry: 'false',
      error: { provider_code: '402', message: 'Insufficient credits' },
    },
    {
      name: 'a body that is not JSON: the message names the provider and status',
      upstream: { status: 500, body: '<html>Bad gateway</html>' },
      status: 502,
      retry: 'true',
      error: { message: 'The provider "mock" answered HTTP 500.', provider_code: null, provider_status: 500 },
    },
    {
      name: 'a proxy in front of the provider nests its body once more',
      upstream: { status: 400, body: { error: { error: { code: 'context_length_exceeded', message: "This model's maximum context length is 8192 tokens." } } } },
      status: 400,
      retry: 'false',
      error: { gateway_code: 'provider_rejected_request', provider_code: 'context_length_exceeded', message: "This model's maximum context length is 8192 tokens." },
    },
    {
      name: 'a nested plain-text error',
      upstream: { status: 503, body: { error: { error: 'upstream overloaded' } } },
      status: 502,
      retry: 'true',
      error: { provider_code: null, message: 'upstream overloaded' },
    },
    {
      name: 'a per-provider exact rule wins over the global class',
      upstream: { status: 418, body: { error: { message: 'short and stout' } } },
      status: 400,
      retry: 'false',
      error: { code: 'teapot', gateway_code: 'provider_teapot', provider_status: 418 },
    },
    {
      name: 'a status no rule names falls to default',
      upstream: { status: 302, body: '' },
      status: 502,
      retry: 'true',
      error: { gateway_code: 'provider_error', provider_status: 302 },
    },
  ];
  for (const c of cases) {
    next = c.upstream;
    const response = await gateway.post(ask);
    t.equal(response.status, c.status, `${c.name}: status`);
    t.equal(response.headers.get('x-should-retry'), c.retry, `${c.name}: x-should-retry`);
    const error = await envelopeOf(response);
    t.same(Object.keys(error).sort(), ['code', 'gateway_code', 'message', 'origin', 'param', 'provider', 'provider_code', 'provider_status', 'type']);
    t.match(error, c.error, c.name);
  }
});

t.test('Retry-After and retry-after-ms pass through whatever the mapped status', async (t) => {
  const upstream = await startMockUpstream((_req, res) =>
    sendJson(res, 429, { error: { message: 'Rate limit reached', code: 'rate_limit_exceeded' } }, { 'retry-after': '7', 'retry-after-ms': '6500' }),
  );
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const response = await gateway.post(ask);
  t.equal(response.status, 429);
  t.equal(response.headers.get('retry-after'), '7');
  t.equal(response.headers.get('retry-after-ms'), '6500');
  t.equal(response.headers.get('x-should-retry'), 'true');
  t.match(await envelopeOf(response), { type: 'rate_limit_error', gateway_code: 'provider_rate_limited' });
});

t.test('a refused connection is 502 upstream_unreachable, retryable', async (t) => {
  const closedPort = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
  const gateway = await startGateway({ upstreamOrigin: `http://127.0.0.1:${closedPort}` });
  t.teardown(() => gateway.close());
  const response = await gateway.post(ask);
  t.equal(response.status, 502);
  t.equal(response.headers.get('x-should-retry'), 'true');
  t.match(await envelopeOf(response), { gateway_code: 'upstream_unreachable', origin: 'gateway', provider: 'mock', provider_status: null, provider_code: null });
});

t.test('a provider that does not answer within timeout_ms is 502 upstream_timeout', async (t) => {
  const upstream = await startMockUpstream(() => undefined); // never answers
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const started = Date.now();
  const response = await gateway.post({ model: 'slow/model', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(response.status, 502);
  t.equal(response.headers.get('x-should-retry'), 'true');
  const error = await envelopeOf(response);
  t.match(error, { gateway_code: 'upstream_timeout', provider: 'slow', provider_status: null });
  t.match(error['message'], /300 ms/);
  t.ok(Date.now() - started < 3000, 'gave up at timeout_ms, not at some default');
});

t.test('a non-streamed answer must arrive whole within timeout_ms, not just its headers', async (t) => {
  const upstream = await startMockUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"id":"x",'); // and then nothing
  });
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const response = await gateway.post({ model: 'slow/model', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(response.status, 502);
  t.match(await envelopeOf(response), { gateway_code: 'upstream_timeout' });
});

t.test('a 2xx that is not a JSON object is 502 invalid_upstream_response', async (t) => {
  let body = '';
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, body));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin, maxUpstreamBodyBytes: 1000 });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  for (const bad of ['not json', '[1,2]', '"text"', '', `{"pad":"${'x'.repeat(2000)}"}`]) {
    body = bad;
    const response = await gateway.post(ask);
    t.equal(response.status, 502, `${JSON.stringify(bad.slice(0, 20))} is refused`);
    t.equal(response.headers.get('x-should-retry'), 'true');
    t.match(await envelopeOf(response), { gateway_code: 'invalid_upstream_response', provider: 'mock', provider_status: 200 });
  }
});

t.test('a reset before any answer is 502 upstream_unreachable', async (t) => {
  const upstream = await startMockUpstream((_req, res) => {
    res.socket?.destroy();
  });
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const response = await gateway.post(ask);
  t.equal(response.status, 502);
  t.match(await envelopeOf(response), { gateway_code: 'upstream_unreachable', provider: 'mock' });
});

t.test('a provider whose TLS handshake never completes is 502 upstream_connect_timeout', async (t) => {
  // Accepts TCP, then says nothing: the TLS handshake hangs, as with a black-holed provider.
  const sockets: Socket[] = [];
  const silent = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as { port: number };
  const gateway = await startGateway({ env: { MOCK_BASE_URL: `https://127.0.0.1:${port}/v1` } });
  t.teardown(async () => {
    await gateway.close();
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });
  const started = Date.now();
  const response = await gateway.post({ model: 'slow/model', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(response.status, 502);
  t.equal(response.headers.get('x-should-retry'), 'true');
  const error = await envelopeOf(response);
  t.match(error, { gateway_code: 'upstream_connect_timeout', provider: 'slow', provider_status: null });
  t.match(error['message'], /connect_timeout_ms/);
  t.ok(Date.now() - started < 3000);
});
