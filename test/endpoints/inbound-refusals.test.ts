import Anthropic from '@anthropic-ai/sdk';
import t from 'tap';
import { chatStream, claudeMessage, completion, eventsOf, startInboundRig, type InboundRig } from '../helpers/inbound-rig.js';

// Every refusal of issue 24, the error shapes of both inbound formats, failover and caller keys on the new endpoints.

const post = (rig: InboundRig, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${rig.gateway.origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

const refusals: [string, Record<string, unknown>, string][] = [
  ['previous_response_id', { previous_response_id: 'resp_1' }, 'previous_response_id'],
  ['conversation', { conversation: 'conv_1' }, 'conversation'],
  ['background: true', { background: true }, 'background'],
  ['a built-in tool', { tools: [{ type: 'web_search' }] }, 'tools[0].type'],
  ['an item_reference', { input: [{ role: 'user', content: 'hi' }, { type: 'item_reference', id: 'msg_1' }] }, 'input[1]'],
  ['an include other than reasoning.encrypted_content', { include: ['file_search_call.results'] }, 'include[0]'],
  ['a field this gateway does not read', { prompt: { id: 'pmpt_1' } }, 'prompt'],
  ['truncation auto', { truncation: 'auto' }, 'truncation'],
  ['an input_file part', { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }] }] }, 'input[0].content[0].type'],
];
for (const [label, fields, param] of refusals) {
  t.test(`POST /v1/responses refuses ${label} with a 400 naming ${param}, sending nothing`, async (t) => {
    const rig = await startInboundRig(t);
    const response = await post(rig, '/v1/responses', { model: 'oai/gpt', input: 'hi', ...fields });
    t.equal(response.status, 400);
    const body = (await response.json()) as { error: Record<string, unknown> };
    t.match(body.error, { param, origin: 'gateway', type: 'invalid_request_error' });
    t.equal(rig.oai.requests.length, 0);
  });
}

t.test('the item_reference refusal says what to send instead, naming the AI SDK setting', async (t) => {
  const rig = await startInboundRig(t);
  const response = await post(rig, '/v1/responses', { model: 'oai/gpt', input: [{ type: 'item_reference', id: 'msg_1' }] });
  t.match(((await response.json()) as { error: { message: string } }).error.message, /send the items themselves.*providerOptions\.openai\.store = false/);
});

t.test('an unknown field is refused naming the docs page that lists what each endpoint reads', async (t) => {
  const rig = await startInboundRig(t);
  const responses = await post(rig, '/v1/responses', { model: 'oai/gpt', input: 'hi', prompt: { id: 'pmpt_1' } });
  t.match(((await responses.json()) as { error: { message: string } }).error.message, /not supported on POST \/v1\/responses by this gateway \(docs\/responses\.md\)/);
  const messages = await post(rig, '/v1/messages', { model: 'oai/gpt', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], container_upload: 1 });
  t.match(((await messages.json()) as { error: { message: string } }).error.message, /not supported on POST \/v1\/messages by this gateway \(docs\/messages\.md\)/);
});

for (const method of ['GET', 'DELETE']) {
  t.test(`${method} /v1/responses/{id}: 404 in the gateway's envelope (nothing is stored)`, async (t) => {
    const rig = await startInboundRig(t);
    const response = await fetch(`${rig.gateway.origin}/v1/responses/resp_123`, { method });
    t.equal(response.status, 404);
    t.match(await response.json(), { error: { gateway_code: 'not_found', message: /stores no responses/ } });
  });
}

t.test('store: true is answered as not stored (store: false in the response object)', async (t) => {
  const rig = await startInboundRig(t);
  rig.oaiAnswer = () => ({ json: completion({ content: 'ok' }) });
  const response = await post(rig, '/v1/responses', { model: 'oai/gpt', input: 'hi', store: true, metadata: { k: 'v' } });
  t.match(await response.json(), { object: 'response', store: false, metadata: { k: 'v' } });
  t.notOk('store' in JSON.parse(rig.oai.requests[0]!.body), 'store is not sent on');
});

t.test('/v1/responses: a failure before the first event is the envelope with its status; after it, response.failed with the envelope fields', async (t) => {
  const rig = await startInboundRig(t);
  rig.oaiAnswer = () => ({ status: 500, json: { error: { message: 'boom' } } });
  const before = await post(rig, '/v1/responses', { model: 'oai/gpt', input: 'hi', stream: true });
  t.equal(before.status, 502);
  t.match(await before.json(), { error: { gateway_code: 'provider_error', provider_status: 500 } });
  rig.oaiAnswer = () => ({ sse: chatStream([{ content: 'partial' }]).split('data: {"id":"chatcmpl-s","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,"delta":{},')[0]! });
  const after = await post(rig, '/v1/responses', { model: 'oai/gpt', input: 'hi', stream: true });
  t.equal(after.status, 200);
  const events = eventsOf(await after.text());
  const last = events.at(-1)!;
  t.equal(last.data['type'], 'response.failed');
  t.match(last.data['response'], { status: 'failed', error: { gateway_code: 'upstream_stream_interrupted', provider: 'oai', code: 'upstream_stream_interrupted' } });
  const numbers = events.map((event) => event.data['sequence_number'] as number);
  t.ok(numbers.every((n, i) => i === 0 || n > numbers[i - 1]!), 'sequence numbers strictly increase');
  t.notOk(events.some((event) => JSON.stringify(event.data).includes('[DONE]')));
});

t.test('failover applies to /v1/responses: a 500 from the openai route falls over to the anthropic fallback', async (t) => {
  const rig = await startInboundRig(t);
  rig.oaiAnswer = () => ({ status: 500, json: { error: { message: 'down' } } });
  rig.claudeAnswer = () => ({ json: claudeMessage([{ type: 'text', text: 'from the fallback' }]) });
  const response = await post(rig, '/v1/responses', { model: 'oai/to-claude', input: 'hi' });
  t.equal(response.status, 200);
  t.equal(response.headers.get('x-gateway-served-by'), 'claude/sonnet#0');
  t.match(await response.json(), { model: 'oai/to-claude', output: [{ type: 'message', content: [{ text: 'from the fallback' }] }] });
});

t.test('failover applies to /v1/messages: a 529 from Anthropic (native) falls over to the openai route (translated)', async (t) => {
  const rig = await startInboundRig(t);
  rig.claudeAnswer = () => ({ status: 529, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
  rig.oaiAnswer = () => ({ json: completion({ content: 'from the fallback' }) });
  const message = await new Anthropic({ baseURL: rig.gateway.origin, apiKey: 'k', maxRetries: 0 }).messages.create({ model: 'claude/to-oai', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
  t.match(message, { model: 'claude/to-oai', content: [{ type: 'text', text: 'from the fallback' }] });
  t.match(JSON.parse(rig.claude.requests[0]!.body), { model: 'claude-down' });
  t.match(JSON.parse(rig.oai.requests[0]!.body), { model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }] });
});

t.test("/v1/messages errors are in Anthropic's shape with the gateway's fields; an overloaded provider is 529 overloaded_error", async (t) => {
  const rig = await startInboundRig(t);
  rig.claudeAnswer = () => ({ status: 529, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
  const client = new Anthropic({ baseURL: rig.gateway.origin, apiKey: 'k', maxRetries: 0 });
  const overloaded = await client.messages.create({ model: 'claude/sonnet', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  t.ok(overloaded instanceof Anthropic.APIError);
  t.equal((overloaded as InstanceType<typeof Anthropic.APIError>).status, 529);
  t.match((overloaded as InstanceType<typeof Anthropic.APIError>).error, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded', provider: 'claude', provider_status: 529, gateway_code: 'provider_overloaded' } });
  const unknown = await client.messages.create({ model: 'nope/x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  t.ok(unknown instanceof Anthropic.BadRequestError);
  t.match((unknown as InstanceType<typeof Anthropic.BadRequestError>).error, { type: 'error', error: { type: 'invalid_request_error', param: 'model', gateway_code: 'unknown_model' } });
  const missing = await post(rig, '/v1/messages/batches', {});
  t.equal(missing.status, 404);
  t.match(await missing.json(), { type: 'error', error: { type: 'not_found_error' } });
  const malformed = await post(rig, '/v1/messages', '{"model":');
  t.equal(malformed.status, 400);
  t.match(await malformed.json(), { type: 'error', error: { type: 'invalid_request_error', gateway_code: 'invalid_json' } });
});

t.test('/v1/messages refusals on translated routes name the field; the same field goes natively to Anthropic unless it is gated', async (t) => {
  const rig = await startInboundRig(t);
  rig.claudeAnswer = () => ({ json: claudeMessage([{ type: 'text', text: 'ok' }]) });
  // A server tool and a container also need routes.yaml's allow_fields natively (test/endpoints/messages/messages-native-gated.test.ts).
  for (const [fields, param, natively] of [
    [{ top_k: 5 }, 'top_k', true],
    [{ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools[0].type', false],
    [{ container: 'c1' }, 'container', false],
    [{ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', data: 'x' } }] }] }, 'messages[0].content[0].type', true],
  ] as const) {
    const body = { model: 'oai/gpt', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], ...fields };
    const refused = await post(rig, '/v1/messages', body);
    t.equal(refused.status, 400, `${param} refused`);
    t.match(await refused.json(), { type: 'error', error: { type: 'invalid_request_error', param } });
    const native = await post(rig, '/v1/messages', { ...body, model: 'claude/sonnet' });
    t.equal(native.status, natively ? 200 : 400, natively ? `${param} goes natively to Anthropic` : `${param} is refused natively too without allow_fields`);
  }
  t.equal(rig.oai.requests.length, 0);
  t.equal(rig.claude.requests.length, 2, 'only what needs no allow_fields reached Anthropic');
});

t.test('a mid-stream failure on /v1/messages ends with an error event in Anthropic\'s shape', async (t) => {
  const rig = await startInboundRig(t);
  rig.oaiAnswer = () => ({ sse: 'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"par"},"finish_reason":null}]}\n\n' });
  const response = await post(rig, '/v1/messages', { model: 'oai/gpt', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] });
  const events = eventsOf(await response.text());
  t.strictSame(events.map((event) => event.event), ['message_start', 'ping', 'content_block_start', 'content_block_delta', 'error']);
  t.match(events.at(-1)!.data, { type: 'error', error: { type: 'api_error', gateway_code: 'upstream_stream_interrupted' } });
});

t.test('caller keys: x-api-key is accepted on /v1/messages routes, Bearer too; a wrong key is authentication_error; x-api-key is not a key on other endpoints', async (t) => {
  const rig = await startInboundRig(t, { callerKeys: ['caller-key-1'] });
  rig.claudeAnswer = () => ({ json: claudeMessage([{ type: 'text', text: 'ok' }]) });
  rig.oaiAnswer = () => ({ json: completion({ content: 'ok' }) });
  const ok = await new Anthropic({ baseURL: rig.gateway.origin, apiKey: 'caller-key-1', maxRetries: 0 }).messages.create({ model: 'claude/sonnet', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(ok.model, 'claude/sonnet');
  t.not(rig.claude.requests[0]!.headers['x-api-key'], 'caller-key-1', 'the caller key never reaches the provider');
  const bearer = await post(rig, '/v1/messages', { model: 'claude/sonnet', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, { authorization: 'Bearer caller-key-1' });
  t.equal(bearer.status, 200);
  const wrong = await new Anthropic({ baseURL: rig.gateway.origin, apiKey: 'wrong', maxRetries: 0 }).messages.create({ model: 'claude/sonnet', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  t.ok(wrong instanceof Anthropic.AuthenticationError);
  t.match((wrong as InstanceType<typeof Anthropic.AuthenticationError>).error, { type: 'error', error: { type: 'authentication_error', gateway_code: 'unauthorized' } });
  const counted = await post(rig, '/v1/messages/count_tokens', { model: 'oai/gpt', messages: [] }, { 'x-api-key': 'caller-key-1' });
  t.equal(counted.status, 404, 'past the key check on count_tokens too');
  const responses = await post(rig, '/v1/responses', { model: 'oai/gpt', input: 'hi' }, { 'x-api-key': 'caller-key-1' });
  t.equal(responses.status, 401);
  t.match(await responses.json(), { error: { gateway_code: 'unauthorized' } });
});

t.test('streams ask for usage for their terminal event, except from a provider whose routes.yaml says stream_usage: false', async (t) => {
  const rig = await startInboundRig(t);
  rig.oaiAnswer = () => ({ sse: chatStream([{ content: 'ok' }]) });
  for (const model of ['oai/gpt', 'plain/gpt']) {
    const response = await post(rig, '/v1/responses', { model, input: 'hi', stream: true });
    t.equal(eventsOf(await response.text()).at(-1)?.data['type'], 'response.completed', model);
  }
  t.match(JSON.parse(rig.oai.requests[0]!.body), { model: 'gpt-4.1', stream_options: { include_usage: true } });
  const plain = JSON.parse(rig.oai.requests[1]!.body) as Record<string, unknown>;
  t.equal(plain['model'], 'gpt-plain');
  t.notOk('stream_options' in plain, 'no stream_options to a provider that refuses them');
});
