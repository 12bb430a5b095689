import OpenAI from 'openai';
import t from 'tap';
import { PROVIDER_KEY, startGateway } from '../../helpers/gateway.js';
import { completionBody, sendJson, startMockUpstream } from '../../helpers/mock-upstream.js';

/** An Azure-style provider: the raw key under `api-key`, as routes.yaml `auth` says (issue 11). */
const AZURE_ROUTES = `version: 1
providers:
  azure:
    base_url: http://127.0.0.1:9/openai/v1
    base_url_env: MOCK_BASE_URL
    api_key_env: MOCK_API_KEY
    auth: { header: api-key }
  plain:
    base_url: http://127.0.0.1:9/v1
    base_url_env: MOCK_BASE_URL
    api_key_env: MOCK_API_KEY
models:
  azure/gpt-4o: { max_output_tokens: 16384 }
  plain/gpt-4o:
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

t.test('auth: { header: api-key } sends the raw key under api-key and no Authorization', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('gpt-4o-2024-11-20', 'hello')));
  const gateway = await startGateway({ routes: AZURE_ROUTES, upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  const client = new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller-not-forwarded' });
  const completion = await client.chat.completions.create({ model: 'azure/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(completion.choices[0]?.message.content, 'hello');
  t.equal(completion.model, 'azure/gpt-4o');
  const seen = upstream.requests[0]!;
  t.equal(seen.url, '/v1/chat/completions');
  t.equal(seen.headers['api-key'], PROVIDER_KEY);
  t.equal(seen.headers['authorization'], undefined, 'no Authorization: neither the key as a bearer token nor the caller key');

  // The default scheme of the openai dialect is unchanged.
  await client.chat.completions.create({ model: 'plain/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(upstream.requests[1]?.headers['authorization'], `Bearer ${PROVIDER_KEY}`);
  t.equal(upstream.requests[1]?.headers['api-key'], undefined);
});

t.test('a key sent under a header of its own is still redacted from what the provider says', async (t) => {
  const upstream = await startMockUpstream((_req, res) =>
    sendJson(res, 401, { error: { message: `Incorrect API key provided: ${PROVIDER_KEY}`, type: 'invalid_request_error', code: 'invalid_api_key' } }),
  );
  const gateway = await startGateway({ routes: AZURE_ROUTES, upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  const res = await gateway.post({ model: 'azure/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  const text = await res.text();
  t.equal(res.status, 502);
  t.notMatch(text, PROVIDER_KEY);
  t.equal(upstream.requests[0]?.headers['api-key'], PROVIDER_KEY);
});
