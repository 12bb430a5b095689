// POST /v1/embeddings is served by the chat engine: callers' allow-lists, limits and budgets (prompt tokens), the
// request log line, the metrics, failover between a provider's endpoints, and the bound on the provider's answer.
import t from 'tap';
import { sendJson } from '../helpers/mock-upstream.js';
import { envelopeOf } from '../helpers/gateway.js';
import { digestLine } from '../helpers/callers-routes.js';
import { EMBEDDINGS_ROUTES, startEmbeddingsRig, vectorFor } from '../helpers/embeddings-rig.js';

const TEAM = 'gw-embeddings-team-key-0123456789abcdef';
const TIGHT = 'gw-embeddings-tight-key-0123456789abcdef';
const BUDGETED = 'gw-embeddings-budget-key-0123456789abcdef';
const routes = `${EMBEDDINGS_ROUTES}callers:
  team:
    keys: [${digestLine(TEAM)}]
    models: ["oai/*", "two/*", gem/embed]
  tight:
    keys: [${digestLine(TIGHT)}]
    models: [oai/embed]
    limits: { requests_per_minute: 1 }
  budgeted:
    keys: [${digestLine(BUDGETED)}]
    models: [oai/embed]
    budget: { usd_per_day: 1 }
`;
const rig = await startEmbeddingsRig({ routes, maxUpstreamBodyBytes: 16 * 1024 });
t.teardown(() => rig.close());
const as = (key: string) => ({ authorization: `Bearer ${key}` });

t.test('one log line per request: routing string, caller, status, attempts, prompt tokens; the metrics count it', async (t) => {
  const response = await rig.post({ model: 'oai/embed', input: ['a', 'b'] }, '/v1/embeddings', { ...as(TEAM), 'x-request-id': 'emb-log-1' });
  t.equal(response.status, 200);
  t.equal(response.headers.get('x-request-id'), 'emb-log-1');
  await response.arrayBuffer();
  const line = await rig.gateway.requestLog('emb-log-1');
  t.match(line, { model: 'oai/embed', provider: 'oai', caller: 'team', status: 200, gateway_code: null, prompt_tokens: 14, completion_tokens: 0, usage_estimated: false, stream: false });
  t.match(line['attempts'], [{ route: 'oai/embed', provider: 'oai', outcome: 'ok' }]);
  t.equal(JSON.stringify(line).includes('"a"'), false, 'no input text in the log');
  const metrics = await (await fetch(`${rig.gateway.origin}/metrics`)).text();
  t.match(metrics, /gateway_requests_total\{model="oai\/embed",provider="oai",status="200",gateway_code="",caller="team"\} 1/);
  t.match(metrics, /gateway_tokens_total\{model="oai\/embed",kind="prompt"\} 14/);
});

t.test('failover: two endpoints, the first answers 503, the second serves', async (t) => {
  // The first endpoint weighs 1000 times the second: drawn first all but once in a thousand; drawn again then.
  for (let round = 0; round < 5; round++) {
    const before = rig.mock.requests.length;
    const id = `emb-failover-${round}`;
    const response = await rig.post({ model: 'two/embed', input: 'x', encoding_format: 'float' }, '/v1/embeddings', { ...as(TEAM), 'x-request-id': id });
    t.equal(response.status, 200);
    t.strictSame(((await response.json()) as { data: { embedding: number[] }[] }).data[0]?.embedding, vectorFor(0));
    const urls = rig.mock.requests.slice(before).map((request) => request.url);
    if (urls[0] !== '/first/v1/embeddings') continue;
    t.strictSame(urls, ['/first/v1/embeddings', '/second/v1/embeddings']);
    t.match((await rig.gateway.requestLog(id))['attempts'], [{ endpoint: 'first', outcome: '503' }, { endpoint: 'second', outcome: 'ok' }]);
    return;
  }
  t.fail('the first endpoint was never drawn first');
});

t.test("the caller's allow-list: 403 model_not_allowed, nothing sent; the kind is checked before it", async (t) => {
  const before = rig.mock.requests.length;
  const denied = await rig.post({ model: 'gem/embed', input: 'x' }, '/v1/embeddings', as(TIGHT));
  t.equal(denied.status, 403);
  t.equal((await envelopeOf(denied))['gateway_code'], 'model_not_allowed');
  const kind = await rig.post({ model: 'oai/chat', input: 'x' }, '/v1/embeddings', as(TIGHT));
  t.equal(kind.status, 400, 'a chat model is refused for its kind, whatever the caller may use');
  t.match((await envelopeOf(kind))['message'], /kind: chat/);
  const noKey = await rig.post({ model: 'oai/embed', input: 'x' });
  t.equal(noKey.status, 401);
  await noKey.arrayBuffer();
  t.equal(rig.mock.requests.length, before);
});

t.test('requests_per_minute counts embeddings requests: the second is 429, nothing sent', async (t) => {
  const first = await rig.post({ model: 'oai/embed', input: 'x' }, '/v1/embeddings', as(TIGHT));
  t.equal(first.status, 200);
  await first.arrayBuffer();
  const before = rig.mock.requests.length;
  const second = await rig.post({ model: 'oai/embed', input: 'x' }, '/v1/embeddings', as(TIGHT));
  t.equal(second.status, 429);
  t.equal((await envelopeOf(second))['gateway_code'], 'caller_rate_limited');
  t.equal(rig.mock.requests.length, before);
});

t.test("budgets take the answer's prompt_tokens at input_per_mtok", async (t) => {
  rig.answerWith((_request, res) => (sendJson(res, 200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5] }], model: 'm', usage: { prompt_tokens: 1_000_000, total_tokens: 1_000_000 } }), true));
  t.teardown(() => rig.answerWith(undefined));
  const spent = await rig.post({ model: 'oai/embed', input: 'x' }, '/v1/embeddings', { ...as(BUDGETED), 'x-request-id': 'emb-budget' });
  t.equal(spent.status, 200);
  await spent.arrayBuffer();
  t.match(await rig.gateway.requestLog('emb-budget'), { prompt_tokens: 1_000_000, cost_usd: 1 });
  const before = rig.mock.requests.length;
  const refused = await rig.post({ model: 'oai/embed', input: 'x' }, '/v1/embeddings', as(BUDGETED));
  t.equal(refused.status, 429);
  t.equal((await envelopeOf(refused))['code'], 'insufficient_quota');
  t.equal(rig.mock.requests.length, before);
});

t.test('an answer over MAX_UPSTREAM_BODY_BYTES: 502 invalid_upstream_response, and the gateway serves on', async (t) => {
  rig.answerWith((_request, res) => (sendJson(res, 200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: Array.from({ length: 5000 }, () => 0.123456) }], model: 'm' }), true));
  const big = await rig.post({ model: 'oai/embed', input: 'x' }, '/v1/embeddings', as(TEAM));
  t.equal(big.status, 502);
  t.equal((await envelopeOf(big))['gateway_code'], 'invalid_upstream_response');
  rig.answerWith(undefined);
  const next = await rig.post({ model: 'oai/embed', input: 'x' }, '/v1/embeddings', as(TEAM));
  t.equal(next.status, 200);
  await next.arrayBuffer();
});
