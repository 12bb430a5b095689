import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { PROVIDER_KEY, startGateway } from '../helpers/gateway.js';
import { parseExposition, valueOf } from '../helpers/prometheus.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';
import { ask, failing, healthy, switchable } from '../helpers/failover-setup.js';

// A route with one endpoint and no fallback takes the engine's fast path (no failover bookkeeping): what a caller,
// the log line, /metrics and the breaker show must be what the failover loop shows for the same route.
// Ejections here are 2 failures in a row for 1 s; the sleeps leave a margin that a loaded machine only widens.
const ROUTES = `version: 1
providers:
  only: { base_url: http://127.0.0.1:9/v1, base_url_env: ONLY_URL, api_key_env: MOCK_API_KEY }
models:
  only/model: { upstream_model: only-upstream }
defaults: { max_attempts: 3, breaker: { consecutive_failures: 2, cooldown_ms: 1000, max_cooldown_ms: 4000 } }
errors:
  "4xx": { status: 400, type: invalid_request_error, code: invalid_request, gateway_code: provider_rejected_request }
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

async function startOnly(t: Test) {
  const upstream = await switchable(t);
  const gateway = await startGateway({ routes: ROUTES, env: { ONLY_URL: `${upstream.origin}/v1`, MOCK_API_KEY: PROVIDER_KEY } });
  t.teardown(() => gateway.close());
  const metrics = async () => parseExposition(await (await fetch(`${gateway.origin}/metrics`)).text());
  const breaker = async () => {
    const samples = await metrics();
    return ['closed', 'open', 'half_open'].find((state) => valueOf(samples, 'gateway_endpoint_breaker_state', { provider: 'only', endpoint: '0', state }) === 1);
  };
  // /metrics scrapes are logged too: the chat requests' lines only.
  const lastChatLine = () => gateway.requestLogs().filter((line) => line['path'] === '/v1/chat/completions').at(-1)!;
  return { upstream, gateway, metrics, breaker, lastChatLine };
}

t.test('served: one attempt logged, x-gateway-served-by, attempts and requests in /metrics', async (t) => {
  const { gateway, metrics, lastChatLine } = await startOnly(t);
  for (let i = 0; i < 3; i++) {
    const response = await gateway.post(ask('only/model'));
    t.equal(response.status, 200);
    t.equal(response.headers.get('x-gateway-served-by'), 'only/model#0');
    t.equal(((await response.json()) as { model: string }).model, 'only/model');
  }
  const line = lastChatLine();
  t.match(line, { provider: 'only', model: 'only/model', status: 200, gateway_code: null, attempts: [{ route: 'only/model', provider: 'only', endpoint: '0', outcome: 'ok' }] });
  t.equal((line['attempts'] as unknown[]).length, 1);
  const samples = await metrics();
  t.equal(valueOf(samples, 'gateway_upstream_attempts_total', { provider: 'only', endpoint: '0', outcome: 'ok' }), 3);
  t.equal(valueOf(samples, 'gateway_requests_total', { model: 'only/model', provider: 'only', status: '200', gateway_code: '', caller: 'anonymous' }), 3);
});

t.test('failures open the breaker; while it is open the only endpoint is still tried (forced), and a success closes it', async (t) => {
  const { upstream, gateway, metrics, breaker, lastChatLine } = await startOnly(t);
  upstream.behave = failing(503);
  for (let i = 0; i < 2; i++) t.equal((await gateway.post(ask('only/model'))).status, 502);
  t.equal(await breaker(), 'open', 'ejected after consecutive_failures');
  const forced = await gateway.post(ask('only/model'));
  t.equal(forced.status, 502, 'never a 503 for everybody: the ejected endpoint is still tried');
  t.equal(upstream.requests.length, 3, 'one attempt per request, never the same endpoint twice');
  t.match(lastChatLine(), { gateway_code: 'provider_error', attempts: [{ route: 'only/model', endpoint: '0', outcome: '503' }] });
  t.equal((lastChatLine()['attempts'] as unknown[]).length, 1);
  t.equal(valueOf(await metrics(), 'gateway_upstream_attempts_total', { provider: 'only', endpoint: '0', outcome: '503' }), 3);
  upstream.behave = healthy;
  t.equal((await gateway.post(ask('only/model'))).status, 200);
  t.equal(await breaker(), 'closed', "a forced attempt's success closes the breaker");
});

t.test('after the cooldown one probe is let through; its failure ejects again', async (t) => {
  const { upstream, gateway, breaker } = await startOnly(t);
  upstream.behave = failing(503);
  for (let i = 0; i < 2; i++) await (await gateway.post(ask('only/model'))).arrayBuffer();
  await sleep(1100);
  t.equal(await breaker(), 'half_open');
  await (await gateway.post(ask('only/model'))).arrayBuffer();
  t.equal(await breaker(), 'open', 'the failed probe ejected it again');
  t.equal(upstream.requests.length, 3);
});

t.test('a 400 from the provider is the request\'s fault: logged, not counted against the endpoint', async (t) => {
  const { upstream, gateway, breaker, lastChatLine } = await startOnly(t);
  upstream.behave = failing(400);
  for (let i = 0; i < 3; i++) t.equal((await gateway.post(ask('only/model'))).status, 400);
  t.equal(await breaker(), 'closed');
  t.match(lastChatLine(), { gateway_code: 'provider_rejected_request', attempts: [{ endpoint: '0', outcome: '400' }] });
});

t.test('streams: a stream cut after its first event counts against the endpoint and is logged once', async (t) => {
  const { upstream, gateway, breaker, lastChatLine } = await startOnly(t);
  upstream.behave = (_request, res) => {
    startEventStream(res);
    res.write(sseBody([chunk('only-upstream', { role: 'assistant', content: 'half' })], { done: false }));
    setTimeout(() => res.socket?.destroy(), 20);
  };
  for (let i = 0; i < 2; i++) {
    const response = await gateway.post(ask('only/model', { stream: true }));
    t.equal(response.status, 200);
    await response.text();
  }
  t.equal(await breaker(), 'open', 'ejected after two cut streams');
  const line = lastChatLine();
  t.match(line, { stream: true, attempts: [{ route: 'only/model', endpoint: '0', outcome: 'upstream_stream_interrupted' }] });
  t.equal((line['attempts'] as unknown[]).length, 1);
});
