import t, { type Test } from 'tap';
import { PROVIDER_KEY, envelopeOf, startGateway } from '../helpers/gateway.js';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';

const CALLER_KEY = 'gw-caller-key-5b8e1c';
const ask = { model: 'mock/gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }] };

async function securedGateway(t: Test) {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('gpt-4.1-mini')));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin, callerKeys: ['other-key-1', CALLER_KEY] });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  return { upstream, gateway };
}

t.test('with keys configured, a request needs Authorization: Bearer <one of them>', async (t) => {
  const { gateway, upstream } = await securedGateway(t);
  for (const [name, headers] of [
    ['no header', {}],
    ['wrong key', { authorization: 'Bearer not-a-key' }],
    ['a prefix of a key', { authorization: `Bearer ${CALLER_KEY.slice(0, -1)}` }],
    ['wrong scheme', { authorization: `Basic ${CALLER_KEY}` }],
  ] as const) {
    const response = await gateway.post(ask, headers);
    t.equal(response.status, 401, `${name}: 401`);
    t.equal(response.headers.get('x-should-retry'), 'false');
    t.match(await envelopeOf(response), { type: 'authentication_error', code: 'invalid_api_key', gateway_code: 'unauthorized', origin: 'gateway', provider: null });
  }
  t.equal(upstream.requests.length, 0, 'nothing reached a provider');

  const ok = await gateway.post(ask, { authorization: `Bearer ${CALLER_KEY}` });
  t.equal(ok.status, 200);
  t.equal(upstream.requests[0]?.headers['authorization'], `Bearer ${PROVIDER_KEY}`, 'the provider sees its own key, not the caller key');
  const lowerScheme = await gateway.post(ask, { authorization: `bearer other-key-1` });
  t.equal(lowerScheme.status, 200, 'any configured key, scheme in any case');
});

t.test('the key is checked before routing: an unknown path without a key is 401, not 404', async (t) => {
  const { gateway } = await securedGateway(t);
  const unknown = await fetch(`${gateway.origin}/v1/embeddings`, { method: 'POST' });
  t.equal(unknown.status, 401);
  const models = await fetch(`${gateway.origin}/v1/models`);
  t.equal(models.status, 401);
  const withKey = await fetch(`${gateway.origin}/v1/models`, { headers: { authorization: `Bearer ${CALLER_KEY}` } });
  t.equal(withKey.status, 404);
});

t.test('/health stays open for load balancers', async (t) => {
  const { gateway } = await securedGateway(t);
  const health = await fetch(`${gateway.origin}/health`);
  t.equal(health.status, 200);
});

t.test('no key, caller key, rejected key or message content ever reaches the log', async (t) => {
  const { gateway } = await securedGateway(t);
  const content = 'secret-content-e4d2f9 my card is 4111';
  await gateway.post({ ...ask, messages: [{ role: 'user', content }] }, { authorization: `Bearer ${CALLER_KEY}` });
  await gateway.post({ ...ask, messages: [{ role: 'user', content }] }, { authorization: 'Bearer rejected-key-77a1c3' });
  await gateway.post('{"model":"mock/gpt-4.1-mini","messages":[{"role":"user","content":"secret-content-e4d2f9"}],}', { authorization: `Bearer ${CALLER_KEY}` });
  const log = gateway.logLines.join('');
  t.ok(gateway.requestLogs().length >= 3, 'the requests were logged');
  for (const secret of [CALLER_KEY, 'rejected-key-77a1c3', PROVIDER_KEY, 'secret-content-e4d2f9', 'other-key-1']) {
    t.notOk(log.includes(secret), `${secret.slice(0, 12)}… is not in the log`);
  }
});
