// No loops (docs/deployment.md#loops): every upstream call carries `Via: 1.1 <gateway id>` after the entries the
// request arrived with; a request whose Via names this gateway is refused with 508 loop_detected before its caller
// is identified and before any provider call, with its request log line. The real loop: a gateway whose providers'
// base URL is its own address answers 508 at the first hop back, on each inbound endpoint.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { compileRoutes } from '../../scripts/routes/compile-routes.js';
import { createGateway } from '../../src/app.js';
import { gatewayIdOf } from '../../src/caller/loop-guard.js';
import { parseVia } from '../../src/wire/via.js';
import { envelopeOf, GATEWAY_ROUTES, PROVIDER_KEY, startGateway } from '../helpers/gateway.js';
import { sendJson, startMockUpstream } from '../helpers/mock-upstream.js';

const CALLER_KEY = 'caller-key-for-loop-tests-0123456789';
const ASK = { model: 'mock/gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }] };
const completion = { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-test', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] };

const compiledSha = (routes: string): string => {
  const compiled = compileRoutes(routes);
  if (!compiled.ok) throw new Error('routes do not compile');
  return compiled.tables.sourceSha256;
};

t.test('every upstream call carries Via: 1.1 <gateway id>, after the well-formed entries the request came with', async (t) => {
  const upstream = await startMockUpstream((_request, res) => sendJson(res, 200, completion));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const id = `chat-routing-gateway-${compiledSha(GATEWAY_ROUTES).slice(0, 12)}`;

  t.equal((await gateway.post(ASK)).status, 200);
  t.equal(upstream.requests[0]?.headers['via'], `1.1 ${id}`, 'the default id: shared by every instance built from the same routes.yaml');

  // Comments are free text a caller chose: dropped. A malformed entry is dropped, the rest travels on.
  t.equal((await gateway.post(ASK, { via: '1.0 fred, 1.1 proxy.example.com:8080 (Apache/2.4, secret), HTTP/2 [::1]:443, not a valid entry' })).status, 200);
  t.equal(upstream.requests[1]?.headers['via'], `1.0 fred, 1.1 proxy.example.com:8080, HTTP/2 [::1]:443, 1.1 ${id}`);

  const named = await startGateway({ upstreamOrigin: upstream.origin, env: { GATEWAY_ID: 'edge-eu-1' } });
  t.teardown(() => named.close());
  t.equal((await named.post(ASK)).status, 200);
  t.equal(upstream.requests[2]?.headers['via'], '1.1 edge-eu-1', 'GATEWAY_ID names it');
});

t.test("a request with this gateway's id in Via: 508 loop_detected before caller auth and before any provider call, logged", async (t) => {
  const upstream = await startMockUpstream((_request, res) => sendJson(res, 200, completion));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin, callerKeys: [CALLER_KEY], env: { GATEWAY_ID: 'gw-a' } });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  for (const [via, headers] of [
    ['1.1 gw-a', {}], // a looped request carries a provider key, not a caller key: refused as a loop, not 401
    ['1.1 other, 1.1 GW-A (comment, with a comma)', { authorization: `Bearer ${CALLER_KEY}` }],
    [Array.from({ length: 16 }, (_, i) => `1.1 proxy-${i}`).join(', '), { authorization: `Bearer ${CALLER_KEY}` }],
  ] as const) {
    const response = await gateway.post(ASK, { via, ...headers });
    t.equal(response.status, 508, via.slice(0, 40));
    t.equal(response.headers.get('x-should-retry'), 'false', 'never retried');
    const requestId = response.headers.get('x-request-id')!;
    t.match(await envelopeOf(response), { gateway_code: 'loop_detected', code: 'loop_detected', provider: null, message: /Via|proxies/ });
    t.match(await gateway.requestLog(requestId), { status: 508, gateway_code: 'loop_detected', attempts: null });
  }
  t.equal(upstream.requests.length, 0, 'the provider was never called');
  t.equal((await gateway.post(ASK, { via: '1.1 gw-b', authorization: `Bearer ${CALLER_KEY}` })).status, 200, "another gateway's id passes");
  t.equal(upstream.requests.length, 1);
});

t.test('GATEWAY_ID must be a Via pseudonym, else the gateway does not start', async (t) => {
  t.throws(() => gatewayIdOf('a'.repeat(64), { GATEWAY_ID: 'two words' }), /GATEWAY_ID must be/);
  t.throws(() => gatewayIdOf('a'.repeat(64), { GATEWAY_ID: 'x'.repeat(65) }), /GATEWAY_ID must be/);
  t.equal(gatewayIdOf('0123456789abcdef'.repeat(4), {}), 'chat-routing-gateway-0123456789ab');
  t.strictSame(parseVia('1.1 a (unclosed, 1.1 b'), [], 'nothing after an unclosed comment is read');
});

// Each inbound endpoint calls its provider natively on the same path: the provider is this very gateway.
const LOOP_ROUTES = `version: 1
providers:
  loopchat:
    base_url: http://127.0.0.1:9/v1
    base_url_env: LOOP_BASE_URL
    api_key_env: LOOP_API_KEY
  loopclaude:
    dialect: anthropic
    base_url: http://127.0.0.1:9/v1
    base_url_env: LOOP_BASE_URL
    api_key_env: LOOP_API_KEY
models:
  loopchat/chat: { upstream_model: loopchat/chat }
  loopchat/resp: { upstream_model: loopchat/resp, api: responses }
  loopclaude/msg: { upstream_model: loopclaude/msg, max_output_tokens: 1024 }
errors:
  "508": { status: 508, type: server_error, code: loop_detected, gateway_code: loop_detected, retry: false }
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

/** A gateway listening first, so its providers' base URL can be its own address. */
interface SelfPointing {
  readonly origin: string;
  requestLines(): Record<string, unknown>[];
  warnings(): string[];
  /** Resolves once `count` request lines are written; rejects after 10 s. */
  requestLinesReach(count: number): Promise<void>;
}

/** A server listening before its gateway exists, so gateways' base URLs can name each other (or themselves). */
interface Listener {
  readonly server: Server;
  readonly address: AddressInfo;
  readonly origin: string;
}

async function listenFirst(): Promise<Listener> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return { server, address, origin: `http://127.0.0.1:${address.port}` };
}

async function startSelfPointingGateway(t: Test): Promise<SelfPointing> {
  const listener = await listenFirst();
  return serveGateway(t, listener, listener.origin, [CALLER_KEY]);
}

/** The loop gateway on `listener`, its providers at `providerOrigin`. */
async function serveGateway(t: Test, listener: Listener, providerOrigin: string, callerKeys: readonly string[], env: Record<string, string> = {}): Promise<SelfPointing> {
  const compiled = compileRoutes(LOOP_ROUTES);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  const lines: Record<string, unknown>[] = [];
  const onLine = new Set<() => void>();
  const { server, address, origin } = listener;
  const gateway = createGateway(compiled.tables, {
    env: { LOOP_BASE_URL: `${providerOrigin}/v1`, LOOP_API_KEY: PROVIDER_KEY, ...env },
    version: '0.0.0-test',
    maxBodyBytes: 1024 * 1024,
    maxUpstreamBodyBytes: 8 * 1024 * 1024,
    callerKeys,
    logger: pino(
      { level: 'info' },
      {
        write: (line: string) => {
          lines.push(JSON.parse(line) as Record<string, unknown>);
          for (const look of onLine) look();
        },
      },
    ),
  });
  server.on('request', gateway.app);
  await gateway.listening(address);
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        gateway.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const requestLines = () => lines.filter((line) => line['msg'] === 'request');
  return {
    origin,
    requestLines,
    warnings: () => lines.filter((line) => line['level'] === 40).map((line) => String(line['msg'])),
    requestLinesReach: (count) =>
      new Promise<void>((resolve, reject) => {
        const look = () => {
          if (requestLines().length < count) return;
          onLine.delete(look);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          onLine.delete(look);
          reject(new Error(`${requestLines().length} request lines, not ${count}`));
        }, 10_000);
        onLine.add(look);
        look();
      }),
  };
}

t.test('a real loop: a gateway whose base URL is itself answers 508 at the first hop back, on every inbound endpoint', async (t) => {
  const gateway = await startSelfPointingGateway(t);
  t.equal(gateway.warnings().filter((line) => /own address/.test(line)).length, 2, 'one start-up warning per provider pointing here');
  t.match(gateway.warnings().find((line) => line.startsWith('provider "loopchat"')), /127\.0\.0\.1:\d+ is this gateway's own address.*508 loop_detected/);

  const calls = [
    ['/v1/chat/completions', { model: 'loopchat/chat', messages: [{ role: 'user', content: 'hi' }] }],
    ['/v1/responses', { model: 'loopchat/resp', input: 'hi' }],
    ['/v1/messages', { model: 'loopclaude/msg', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }],
  ] as const;
  for (const [path, body] of calls) {
    const before = gateway.requestLines().length;
    const response = await fetch(`${gateway.origin}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${CALLER_KEY}` },
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as { error: Record<string, unknown> };
    t.equal(response.status, 508, `${path}: the caller gets 508`);
    t.match(answer.error, { gateway_code: 'loop_detected', provider: body.model.split('/')[0], provider_status: 508 }, `${path}: the provider (this gateway) said loop_detected`);
    // Both lines: the hop back (refused, no attempt) and the caller's request (one attempt, at itself).
    await gateway.requestLinesReach(before + 2);
    const [hopBack, outer] = gateway.requestLines().slice(before);
    t.match(hopBack, { path, status: 508, gateway_code: 'loop_detected', caller: null, attempts: null }, `${path}: the first hop back is refused before auth, with no provider call`);
    t.match(outer, { path, status: 508, gateway_code: 'loop_detected', caller: 'key' }, `${path}: the caller's request`);
    t.equal((outer!['attempts'] as unknown[]).length, 1, `${path}: one attempt, not a retry`);
  }
  t.equal(gateway.requestLines().length, calls.length * 2, 'nothing else was sent anywhere');
});

t.test('a loop through two gateways: Via travels on, so the first is named when the request comes back to it', async (t) => {
  const [a, b] = [await listenFirst(), await listenFirst()];
  // Each takes the other's provider key as a caller key: chained on purpose, then pointed back by mistake.
  const gatewayA = await serveGateway(t, a, b.origin, [CALLER_KEY, PROVIDER_KEY], { GATEWAY_ID: 'gw-a' });
  const gatewayB = await serveGateway(t, b, a.origin, [CALLER_KEY, PROVIDER_KEY], { GATEWAY_ID: 'gw-b' });
  t.strictSame([...gatewayA.warnings(), ...gatewayB.warnings()].filter((line) => /own address/.test(line)), [], 'neither points at itself');
  const response = await fetch(`${a.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${CALLER_KEY}` },
    body: JSON.stringify({ model: 'loopchat/chat', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(response.status, 508);
  t.match(await response.json(), { error: { gateway_code: 'loop_detected', provider: 'loopchat', provider_status: 508 } });
  await gatewayA.requestLinesReach(2);
  await gatewayB.requestLinesReach(1);
  const [hopBack, outer] = gatewayA.requestLines();
  t.match(hopBack, { status: 508, gateway_code: 'loop_detected', attempts: null }, 'A refuses the request B sent back (Via: 1.1 gw-a, 1.1 gw-b)');
  t.match(outer, { status: 508, gateway_code: 'loop_detected', caller: 'key' });
  t.match(gatewayB.requestLines(), [{ status: 508, gateway_code: 'loop_detected' }], 'B passed the refusal on, once');
  t.equal(gatewayA.requestLines().length + gatewayB.requestLines().length, 3, 'three requests in all: no second round');
});
