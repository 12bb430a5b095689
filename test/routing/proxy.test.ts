import t from 'tap';
import { PROVIDER_KEY, envelopeOf, startGateway } from '../helpers/gateway.js';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';

t.test('forwards to {base_url}/chat/completions with only model rewritten, byte for byte', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('gpt-4o-2024-11-20')));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  // Values JSON.parse/stringify would change: a seed past 2^53, 1.0, 1e2, -0, escapes, key order, spacing.
  const raw =
    '{ "temperature": 1.0, "model": "mock/gpt-4o", "seed": 12345678901234567890,\n' +
    '  "messages": [{"role": "user", "content": "caf\\u00e9 \\ud83d\\ude00"}],\n' +
    '  "x_vendor": {"weights": [1e2, -0, 0.1000], "nested": {"model": "keep-me"}}, "top_p": 1E-7 }';
  const response = await gateway.post(raw);
  t.equal(response.status, 200);
  t.equal(upstream.requests.length, 1);
  const sent = upstream.requests[0]!;
  t.equal(sent.method, 'POST');
  t.equal(sent.url, '/v1/chat/completions');
  t.equal(sent.body, raw.replace('"model": "mock/gpt-4o"', '"model": "gpt-4o-2024-11-20"'), 'everything but the model is untouched');
});

t.test('the upstream model is the string after the first slash unless upstream_model is set', async (t) => {
  const upstream = await startMockUpstream((req, res) => sendJson(res, 200, completionBody((JSON.parse(req.body) as { model: string }).model)));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  const cases = [
    ['mock/gpt-4.1-mini', 'gpt-4.1-mini'],
    ['mock/anthropic/claude-sonnet-4.5', 'anthropic/claude-sonnet-4.5'],
    ['mock/gpt-4o', 'gpt-4o-2024-11-20'],
    ['keyless/llama3.2', 'llama3.2'],
  ] as const;
  for (const [routing, upstreamModel] of cases) {
    const response = await gateway.post({ model: routing, messages: [{ role: 'user', content: 'hi' }] });
    const body = (await response.json()) as { model: string };
    t.equal((JSON.parse(upstream.requests.at(-1)!.body) as { model: string }).model, upstreamModel, `${routing} goes up as ${upstreamModel}`);
    t.equal(body.model, routing, `${routing} comes back as the routing string`);
  }
});

t.test('the answer keeps every field except model, which becomes the routing string', async (t) => {
  const upstreamText =
    '{"id":"chatcmpl-1","object":"chat.completion","created":1763700000,"model":"gpt-4o-2024-11-20","choices":[{"index":0,' +
    '"message":{"role":"assistant","content":"ok","refusal":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\\"a\\":1}"}}]},' +
    '"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,' +
    '"prompt_tokens_details":{"cached_tokens":1,"cache_write_tokens":2,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":3,' +
    '"accepted_prediction_tokens":0,"rejected_prediction_tokens":0,"audio_tokens":0}},"system_fingerprint":"fp_1","service_tier":"priority",' +
    '"provider_extra":{"cost":0.000123400,"big":98765432109876543210}}';
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, upstreamText));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  const response = await gateway.post({ model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(response.status, 200);
  t.match(response.headers.get('content-type'), /^application\/json/);
  t.equal(await response.text(), upstreamText.replace('"model":"gpt-4o-2024-11-20"', '"model":"mock/gpt-4o"'));
});

t.test('an answer without model gets the routing string', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, '{"id":"x","object":"chat.completion","choices":[]}'));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const response = await gateway.post({ model: 'mock/gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }] });
  t.same(await response.json(), { model: 'mock/gpt-4.1-mini', id: 'x', object: 'chat.completion', choices: [] });
});

t.test('headers: the provider key and static headers go up; no caller header does', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('gpt-4.1-mini')));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  const response = await gateway.post(
    { model: 'mock/gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }] },
    {
      authorization: 'Bearer sk-caller-secret',
      cookie: 'session=caller-cookie',
      'x-custom-caller': 'caller-value',
      'openai-organization': 'org-caller',
      'x-request-id': 'caller-trace.42',
      'proxy-authorization': 'Basic Y2FsbGVy',
    },
  );
  t.equal(response.status, 200);
  t.equal(response.headers.get('x-request-id'), 'caller-trace.42', 'a sane caller request id is kept');
  const { headers } = upstream.requests[0]!;
  t.equal(headers['authorization'], `Bearer ${PROVIDER_KEY}`);
  t.equal(headers['x-title'], 'gateway-tests');
  t.equal(headers['x-request-id'], 'caller-trace.42');
  t.equal(headers['content-type'], 'application/json');
  for (const name of ['cookie', 'x-custom-caller', 'openai-organization', 'proxy-authorization']) t.notOk(name in headers, `${name} is not forwarded`);
  t.notMatch(JSON.stringify(headers), /caller-secret|caller-cookie|caller-value/);
});

t.test('a keyless provider gets no Authorization at all', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('llama3.2')));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  await gateway.post({ model: 'keyless/llama3.2', messages: [{ role: 'user', content: 'hi' }] }, { authorization: 'Bearer sk-caller' });
  t.notOk('authorization' in upstream.requests[0]!.headers);
});

t.test('roster misses are 400 and never reach a provider', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('x')));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  const noPrefix = await gateway.post({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(noPrefix.status, 400);
  t.equal(noPrefix.headers.get('x-should-retry'), 'false');
  t.match(await envelopeOf(noPrefix), {
    gateway_code: 'missing_provider_prefix',
    code: 'model_not_found',
    param: 'model',
    type: 'invalid_request_error',
    message: /e\.g\. "keyless\/llama3\.2"/, // an example from this gateway's own roster
  });

  for (const model of ['mock/gpt-5', 'MOCK/gpt-4o', 'mock/GPT-4o', 'mock/gpt-4o ', 'nobody/gpt-4o', 'mock/', '/gpt-4o']) {
    const response = await gateway.post({ model, messages: [{ role: 'user', content: 'hi' }] });
    t.equal(response.status, 400, `${JSON.stringify(model)} is refused`);
    t.match(await envelopeOf(response), { gateway_code: 'unknown_model', code: 'model_not_found', param: 'model', provider: null });
  }
  t.equal(upstream.requests.length, 0, 'nothing was sent upstream');
});

t.test('a provider whose key is unset answers 500 provider_not_configured naming the variable', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('x')));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  t.match(gateway.warnings, [/unconfigured.*GATEWAY_TEST_UNSET_KEY/], 'start-up warns about it');

  const response = await gateway.post({ model: 'unconfigured/model', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(response.status, 500);
  t.equal(response.headers.get('x-should-retry'), 'false');
  const error = await envelopeOf(response);
  t.match(error, { gateway_code: 'provider_not_configured', provider: 'unconfigured', provider_status: null, origin: 'gateway' });
  t.match(error['message'], /GATEWAY_TEST_UNSET_KEY/);
  t.equal(upstream.requests.length, 0);
});
