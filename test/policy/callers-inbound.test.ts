// Named callers on the other inbound endpoints (README: Callers, /v1/responses, /v1/messages): the same keys
// (x-api-key too on /v1/messages), allowed models and limits as on /v1/chat/completions, refusals in each format.
import t, { type Test } from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { SEARCH_KEY, callersRoutes, digestLine, startUsageMock } from '../helpers/callers-routes.js';

const ROUTES = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    models: [mock/big]
    limits: { requests_per_minute: 2 }`);

async function setUp(t: Test) {
  const mock = await startUsageMock();
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes: ROUTES, upstreamOrigin: mock.upstream.origin });
  t.teardown(() => gateway.close());
  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    fetch(`${gateway.origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { mock, gateway, post };
}

t.test('/v1/responses: a model the caller may not use is 403, and its requests share the caller’s bucket', async (t) => {
  const { mock, post } = await setUp(t);
  const auth = { authorization: `Bearer ${SEARCH_KEY}` };
  const refused = await post('/v1/responses', { model: 'mock/gpt-4.1-mini', input: 'hi' }, auth);
  t.equal(refused.status, 403);
  t.match(await refused.json(), { error: { code: 'model_not_allowed', type: 'permission_error' } });
  // 2 per minute refills one request every 30 s: the three below are sent well within that.
  const statuses = [];
  for (let i = 0; i < 3; i++) {
    const answer = await post('/v1/responses', { model: 'mock/big', input: 'hi' }, auth);
    statuses.push(answer.status);
    if (answer.status === 429) {
      t.match(await answer.json(), { error: { gateway_code: 'caller_rate_limited', type: 'requests' } });
      t.ok(Number(answer.headers.get('retry-after')) >= 1, 'retry-after in whole seconds');
    } else await answer.text();
  }
  t.strictSame(statuses, [200, 200, 429]);
  t.equal(mock.answered(), 2, 'neither refusal reached the provider');
});

t.test('/v1/messages: x-api-key names the caller; refusals come in Anthropic’s error shape', async (t) => {
  const { mock, post } = await setUp(t);
  const auth = { 'x-api-key': SEARCH_KEY, 'anthropic-version': '2023-06-01' };
  const ask = (model: string) => ({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
  const unknownKey = await post('/v1/messages', ask('mock/big'), { 'x-api-key': 'not-a-key' });
  t.equal(unknownKey.status, 401);
  t.match(await unknownKey.json(), { type: 'error', error: { type: 'authentication_error' } });
  const refused = await post('/v1/messages', ask('mock/gpt-4.1-mini'), auth);
  t.equal(refused.status, 403);
  t.match(await refused.json(), { type: 'error', error: { type: 'permission_error' } });
  const statuses = [];
  for (let i = 0; i < 3; i++) {
    const answer = await post('/v1/messages', ask('mock/big'), auth);
    statuses.push(answer.status);
    if (answer.status === 429) t.match(await answer.json(), { type: 'error', error: { type: 'rate_limit_error' } });
    else await answer.text();
  }
  t.strictSame(statuses, [200, 200, 429]);
  t.equal(mock.answered(), 2);
});
