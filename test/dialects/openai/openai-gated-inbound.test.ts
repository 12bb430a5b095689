// The openai dialect's gated fields whichever way they arrive: POST /v1/responses translated to chat, natively to a
// model marked api: responses, and POST /v1/messages translated to chat; refused before anything is sent.
import Anthropic from '@anthropic-ai/sdk';
import { BadRequestError } from 'openai';
import t from 'tap';
import { sentBody, startGatedRig } from './openai-gated-rig.js';

t.test('POST /v1/responses translated to chat: service_tier priority is refused naming it; flex reaches the provider', async (t) => {
  const { client, upstream } = await startGatedRig(t);
  const error = await client.responses.create({ model: 'oai/gpt', input: 'hi', service_tier: 'priority' }).catch((caught: unknown) => caught);
  t.ok(error instanceof BadRequestError, 'a typed 400');
  t.match((error as BadRequestError).error, { param: 'service_tier', gateway_code: 'unsupported_parameter', message: /routes\.yaml must allow it/ });
  t.equal(upstream.requests.length, 0, 'nothing reached the provider');

  const flex = await client.responses.create({ model: 'oai/gpt', input: 'hi', service_tier: 'flex' });
  t.equal(flex.output_text, 'Hello there!');
  t.equal(upstream.requests[0]!.url, '/v1/chat/completions');
  t.equal(sentBody(upstream)['service_tier'], 'flex');
  await client.responses.create({ model: 'oai/fast', input: 'hi', service_tier: 'priority' });
  t.equal(sentBody(upstream)['service_tier'], 'priority', 'allowed on oai/fast: sent');
});

t.test('POST /v1/responses natively (api: responses): service_tier and web_search_options are gated as on chat', async (t) => {
  const { client, gateway, upstream } = await startGatedRig(t);
  const post = (body: unknown) => fetch(`${gateway.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  for (const [field, value] of [['service_tier', 'priority'], ['web_search_options', {}]] as const) {
    const refused = await post({ model: 'oai/resp', input: 'hi', [field]: value });
    t.equal(refused.status, 400, field);
    t.match(await refused.json(), { error: { param: field, code: 'unsupported_parameter', message: new RegExp(`^'${field}' is not allowed for this model`) } }, `${field}: named`);
  }
  t.equal(upstream.requests.length, 0, 'nothing reached the provider');

  const text = '{"model":"oai/resp","input":"hi","service_tier":"default"}';
  const standard = await fetch(`${gateway.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
  t.equal(standard.status, 200);
  t.equal(upstream.requests[0]!.url, '/v1/responses');
  t.equal(upstream.requests[0]!.body, '{"store":false,"model":"gpt-5","input":"hi","service_tier":"default"}', 'as sent, only model set and store added');
  const priority = await client.responses.create({ model: 'oai/resp-fast', input: 'hi', service_tier: 'priority' });
  t.equal(priority.model, 'oai/resp-fast');
  t.equal(sentBody(upstream)['service_tier'], 'priority', 'allowed on oai/resp-fast: sent');
});

t.test('POST /v1/messages translated to chat: service_tier priority is refused in Anthropic\'s shape; auto passes', async (t) => {
  const { gateway, upstream } = await startGatedRig(t);
  const client = new Anthropic({ baseURL: gateway.origin, apiKey: 'sk-caller', maxRetries: 0 });
  const base = { model: 'oai/gpt', max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }] };
  const error = await client.messages.create({ ...base, service_tier: 'priority' } as never).catch((caught: unknown) => caught);
  t.ok(error instanceof Anthropic.BadRequestError, 'a typed 400');
  t.match((error as InstanceType<typeof Anthropic.BadRequestError>).error, {
    type: 'error',
    error: { type: 'invalid_request_error', param: 'service_tier', gateway_code: 'unsupported_parameter', message: /is not allowed for this model: .*allow_fields/ },
  });
  t.equal(upstream.requests.length, 0, 'nothing reached the provider');

  const auto = await client.messages.create({ ...base, service_tier: 'auto' });
  t.match(auto.content, [{ type: 'text', text: 'Hello there!' }]);
  t.equal(sentBody(upstream)['service_tier'], 'auto');
});
