import OpenAI, { APIError, BadRequestError, InternalServerError } from 'openai';
import t from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';

/** The official client, pointed at the gateway exactly as a user would: base URL {origin}/v1. */
function clientFor(origin: string, options: { maxRetries?: number } = {}) {
  return new OpenAI({ baseURL: `${origin}/v1`, apiKey: 'sk-caller-not-forwarded', ...options });
}

t.test('a completion through the official client has model = the routing string', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('gpt-4o-2024-11-20', 'Bonjour 👋')));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  const completion = await clientFor(gateway.origin).chat.completions.create({
    model: 'mock/gpt-4o',
    messages: [{ role: 'user', content: 'Say hello in French' }],
  });
  t.equal(completion.model, 'mock/gpt-4o');
  t.equal(completion.choices[0]?.message.content, 'Bonjour 👋');
  t.equal(completion.usage?.prompt_tokens_details?.cached_tokens, 4);
  t.equal(completion.system_fingerprint, 'fp_44709d6fcb');
  t.equal(upstream.requests[0]?.headers['authorization'], 'Bearer sk-provider-key-for-tests-7f3a', 'the caller key is not what the provider sees');
});

t.test('an unknown model raises BadRequestError and reaches no provider', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('x')));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  const error = await clientFor(gateway.origin)
    .chat.completions.create({ model: 'mock/not-on-roster', messages: [{ role: 'user', content: 'hi' }] })
    .catch((e: unknown) => e);
  t.type(error, BadRequestError);
  t.equal((error as BadRequestError).status, 400);
  t.equal((error as BadRequestError).code, 'model_not_found');
  t.equal((error as BadRequestError).param, 'model');
  t.equal(upstream.requests.length, 0);
});

t.test('a provider 402 surfaces as an APIError with status 402 and code insufficient_quota', async (t) => {
  const upstream = await startMockUpstream((_req, res) =>
    sendJson(res, 402, { error: { message: 'You exceeded your current quota.', type: 'insufficient_quota', code: 'insufficient_quota' } }),
  );
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  const error = await clientFor(gateway.origin)
    .chat.completions.create({ model: 'mock/gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }] })
    .catch((e: unknown) => e);
  t.type(error, APIError);
  t.equal((error as APIError).status, 402);
  t.equal((error as APIError).code, 'insufficient_quota');
  t.equal((error as APIError).type, 'invalid_request_error');
  t.match((error as APIError).error, { gateway_code: 'quota_exceeded', provider: 'mock', provider_status: 402 });
});

t.test('a provider 401 (retry: false) reaches the provider exactly once under default retries', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 401, { error: { message: 'Incorrect API key provided', code: 'invalid_api_key' } }));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  const error = await clientFor(gateway.origin)
    .chat.completions.create({ model: 'mock/gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }] })
    .catch((e: unknown) => e);
  t.type(error, InternalServerError);
  t.equal((error as APIError).status, 502);
  t.equal(upstream.requests.length, 1, 'x-should-retry: false stopped the SDK from retrying');
});

t.test('an unreachable provider surfaces as InternalServerError with status 502', async (t) => {
  const gateway = await startGateway({ upstreamOrigin: 'http://127.0.0.1:9' });
  t.teardown(() => gateway.close());
  const error = await clientFor(gateway.origin, { maxRetries: 0 })
    .chat.completions.create({ model: 'mock/gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }] })
    .catch((e: unknown) => e);
  t.type(error, InternalServerError);
  t.equal((error as APIError).status, 502);
  t.match((error as APIError).error, { gateway_code: 'upstream_unreachable', origin: 'gateway', provider: 'mock' });
});
