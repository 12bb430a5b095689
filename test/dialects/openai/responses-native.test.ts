import OpenAI from 'openai';
import t from 'tap';
import { PROVIDER_KEY } from '../../helpers/gateway.js';
import { sendJson } from '../../helpers/mock-upstream.js';
import { framed, messageOutput, responseEvents, responseObject, sendEvents, startNativeRig } from '../../helpers/native-responses-rig.js';
import { completion } from '../../helpers/inbound-rig.js';

// POST /v1/responses to a model marked `api: responses`: the official openai client, unmodified, against a mock
// OpenAI speaking the Responses protocol natively on /responses (README: POST /v1/responses).

const clientOf = (origin: string) => new OpenAI({ baseURL: `${origin}/v1`, apiKey: 'sk-caller-secret', maxRetries: 0 });

t.test('responses.create, plain: the caller\'s body goes to /responses with the upstream model, store false and the provider\'s key', async (t) => {
  const rig = await startNativeRig(t);
  rig.answer = (_request, _body, res) => sendJson(res, 200, responseObject([messageOutput('Hello natively')]));
  const response = await clientOf(rig.gateway.origin).responses.create({ model: 'oai/resp', input: 'Say hello', instructions: 'Be brief.', store: true, metadata: { team: 'a' }, reasoning: { effort: 'low', summary: 'auto' } });
  t.equal(response.output_text, 'Hello natively');
  t.equal(response.model, 'oai/resp', 'model is the routing string');
  t.equal(response.id, 'resp_up1', 'everything else as the provider answered');
  const sent = rig.oai.requests[0]!;
  t.equal(sent.url, '/v1/responses');
  t.equal(sent.headers['authorization'], `Bearer ${PROVIDER_KEY}`, 'the provider key, never the caller\'s');
  t.notOk(sent.body.includes('sk-caller-secret'));
  t.strictSame(JSON.parse(sent.body), { model: 'gpt-5-resp', input: 'Say hello', instructions: 'Be brief.', store: false, metadata: { team: 'a' }, reasoning: { effort: 'low', summary: 'auto' } }, 'the caller\'s fields as sent, model and store aside');
  const log = rig.gateway.requestLogs()[0]!;
  t.match(log, { path: '/v1/responses', model: 'oai/resp', provider: 'oai', status: 200, prompt_tokens: 20, completion_tokens: 6, cached_tokens: 8, reasoning_tokens: 2 });
  t.ok(typeof log['cost_usd'] === 'number' && log['cost_usd'] > 0, 'priced from the native usage');
  const metrics = await (await fetch(`${rig.gateway.origin}/metrics`)).text();
  t.match(metrics, /gateway_tokens_total\{[^}]*model="oai\/resp"[^}]*kind="prompt"[^}]*\} 20/);
});

t.test('the caller\'s bytes are kept: numbers, key order and unknown fields reach the provider as written', async (t) => {
  const rig = await startNativeRig(t);
  rig.answer = (_request, _body, res) => sendJson(res, 200, responseObject([messageOutput('ok')]));
  const body = '{"input":"hi","temperature":1.50,"model":"oai/resp","text":{"verbosity":"low"},"max_tool_calls":3}';
  const answer = await fetch(`${rig.gateway.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  t.equal(answer.status, 200);
  t.equal(rig.oai.requests[0]!.body, '{"store":false,"input":"hi","temperature":1.50,"model":"gpt-5-resp","text":{"verbosity":"low"},"max_tool_calls":3}');
});

t.test('streamed: the provider\'s events pass in order with the routing string as model, and usage reaches the log', async (t) => {
  const rig = await startNativeRig(t);
  rig.answer = (_request, _body, res) => sendEvents(res, framed(responseEvents(['Hel', 'lo'])));
  const stream = await clientOf(rig.gateway.origin).responses.create({ model: 'oai/resp', input: 'hi', stream: true });
  const types: string[] = [];
  let text = '';
  let last = -1;
  let final: OpenAI.Responses.Response | undefined;
  for await (const event of stream) {
    types.push(event.type);
    t.ok(event.sequence_number > last, `${event.type} in order`);
    last = event.sequence_number;
    if (event.type === 'response.output_text.delta') text += event.delta;
    if (event.type === 'response.created') t.equal(event.response.model, 'oai/resp');
    if (event.type === 'response.completed') final = event.response;
  }
  t.equal(text, 'Hello');
  t.equal(types.length, 10);
  t.equal(final?.model, 'oai/resp');
  t.match(final?.output, [{ type: 'message', content: [{ text: 'Hello' }] }]);
  t.equal(JSON.parse(rig.oai.requests[0]!.body).stream, true);
  t.match(rig.gateway.requestLogs()[0], { stream: true, status: 200, gateway_code: null, prompt_tokens: 20, completion_tokens: 6 });
});

t.test('the stream helper: finalResponse over a native route', async (t) => {
  const rig = await startNativeRig(t);
  rig.answer = (_request, _body, res) => sendEvents(res, framed(responseEvents(['Two', ' parts'])));
  const response = await clientOf(rig.gateway.origin).responses.stream({ model: 'oai/resp', input: 'hi' }).finalResponse();
  t.equal(response.output_text, 'Two parts');
  t.equal(response.model, 'oai/resp');
});

t.test('a tool round trip: function_call out, function_call_output back, each request as the caller sent it', async (t) => {
  const rig = await startNativeRig(t);
  const call = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}', status: 'completed' };
  rig.answer = (_request, body, res) =>
    sendJson(res, 200, Array.isArray(body['input']) && JSON.stringify(body['input']).includes('function_call_output') ? responseObject([messageOutput('It is sunny.')]) : responseObject([call]));
  const client = clientOf(rig.gateway.origin);
  const tools = [{ type: 'function' as const, name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }, strict: true }];
  const first = await client.responses.create({ model: 'oai/resp', input: 'Weather in Oslo?', tools });
  t.match(first.output, [{ type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}' }]);
  const input = [{ role: 'user' as const, content: 'Weather in Oslo?' }, ...first.output.filter((item) => item.type === 'function_call'), { type: 'function_call_output' as const, call_id: 'call_1', output: 'sunny' }];
  const second = await client.responses.create({ model: 'oai/resp', input, tools });
  t.equal(second.output_text, 'It is sunny.');
  const sent = JSON.parse(rig.oai.requests[1]!.body) as Record<string, unknown>;
  t.match(sent, { model: 'gpt-5-resp', tools: [{ type: 'function', name: 'weather', strict: true }], input: [{ role: 'user' }, { type: 'function_call', call_id: 'call_1' }, { type: 'function_call_output', call_id: 'call_1', output: 'sunny' }] });
});

t.test('refused before anything is sent, native route or not: previous_response_id, conversation, background, built-in tools', async (t) => {
  const rig = await startNativeRig(t);
  const cases: [Record<string, unknown>, string][] = [
    [{ previous_response_id: 'resp_1' }, 'previous_response_id'],
    [{ conversation: 'conv_1' }, 'conversation'],
    [{ background: true }, 'background'],
    [{ tools: [{ type: 'function', name: 'f', parameters: {} }, { type: 'web_search' }] }, 'tools[1].type'],
    [{ stream: 'yes' }, 'stream'],
  ];
  for (const [fields, param] of cases) {
    const answer = await fetch(`${rig.gateway.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oai/resp', input: 'hi', ...fields }) });
    t.equal(answer.status, 400, param);
    t.match(await answer.json(), { error: { param, code: param === 'stream' ? 'invalid_request' : 'unsupported_parameter' } }, param);
  }
  t.equal(rig.oai.requests.length, 0);
});

t.test('built-in tools go natively only to a model whose allow_fields lists built_in_tools; elsewhere a 400 naming the tool', async (t) => {
  const rig = await startNativeRig(t);
  rig.answer = (_request, _body, res) => sendJson(res, 200, responseObject([messageOutput('Searched.')]));
  const tools = [{ type: 'function', name: 'f', parameters: {} }, { type: 'web_search' }];
  const send = (model: string) => fetch(`${rig.gateway.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, input: 'news?', tools }) });
  for (const model of ['oai/resp', 'oai/chat']) {
    const refused = await send(model);
    t.equal(refused.status, 400, model);
    t.match(await refused.json(), { error: { param: 'tools[1].type', code: 'unsupported_parameter', message: /built_in_tools/ } }, `${model}: named, with what would allow it`);
  }
  t.equal(rig.oai.requests.length, 0, 'nothing was sent');
  const allowed = await send('oai/resp-tools');
  t.equal(allowed.status, 200);
  t.match(await allowed.json(), { model: 'oai/resp-tools', output: [{ type: 'message' }] });
  t.strictSame(JSON.parse(rig.oai.requests[0]!.body).tools, tools, 'the tools went as sent');
});

t.test('a provider error before the answer is the gateway envelope; after the first event, the provider\'s own response.failed passes', async (t) => {
  const rig = await startNativeRig(t);
  rig.answer = (_request, _body, res) => sendJson(res, 400, { error: { message: 'Unknown parameter: foo', type: 'invalid_request_error', param: 'foo', code: 'unknown_parameter' } });
  const refused = await fetch(`${rig.gateway.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oai/resp', input: 'hi', foo: 1 }) });
  t.equal(refused.status, 502);
  t.match(await refused.json(), { error: { provider: 'oai', provider_status: 400, provider_code: 'unknown_parameter', message: /Unknown parameter/ } });
  const failed = { type: 'response.failed', sequence_number: 2, response: { ...responseObject([]), status: 'failed', error: { code: 'server_error', message: 'boom' } } };
  rig.answer = (_request, _body, res) => sendEvents(res, framed([...responseEvents([], { end: false }).slice(0, 2), failed]));
  const stream = await fetch(`${rig.gateway.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oai/resp', input: 'hi', stream: true }) });
  const text = await stream.text();
  t.match(text, /event: response\.failed\ndata: \{"type":"response\.failed","sequence_number":2,"response":\{[^\n]*"model":"oai\/resp"/);
  t.match(rig.gateway.requestLogs()[1], { gateway_code: 'provider_stream_error', provider: 'oai' });
});

t.test('failover from a native route to a chat-only fallback: the request is translated for the fallback', async (t) => {
  const rig = await startNativeRig(t);
  rig.answer = (request, _body, res) => (request.url === '/v1/responses' ? sendJson(res, 503, { error: { message: 'down' } }) : sendJson(res, 200, completion({ content: 'from chat' })));
  const response = await clientOf(rig.gateway.origin).responses.create({ model: 'oai/resp-to-chat', input: 'hi' });
  t.equal(response.output_text, 'from chat');
  t.equal(response.model, 'oai/resp-to-chat');
  t.strictSame(rig.oai.requests.map((request) => request.url), ['/v1/responses', '/v1/chat/completions']);
  t.match(JSON.parse(rig.oai.requests[1]!.body), { model: 'gpt-backup', messages: [{ role: 'user', content: 'hi' }] });
  t.match(rig.gateway.requestLogs()[0]!['attempts'], [{ route: 'oai/resp-to-chat', outcome: '503' }, { route: 'backup/chat', outcome: 'ok' }]);
});

t.test('a request with no chat form (an input_file part): served natively, and a chat-only fallback is skipped and logged', async (t) => {
  const rig = await startNativeRig(t);
  rig.answer = (_request, _body, res) => sendJson(res, 503, { error: { message: 'down' } });
  const input = [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }, { type: 'input_text', text: 'Summarise' }] }];
  const answer = await fetch(`${rig.gateway.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oai/resp-to-chat', input }) });
  t.equal(answer.status, 502, 'the native attempt\'s failure is the answer');
  t.strictSame(rig.oai.requests.map((request) => request.url), ['/v1/responses']);
  t.match(rig.gateway.requestLogs()[0]!['attempts'], [{ route: 'oai/resp-to-chat', outcome: '503' }, { route: 'backup/chat', endpoint: '', outcome: 'unsupported_parameter' }]);
  rig.answer = (_request, _body, res) => sendJson(res, 200, responseObject([messageOutput('summary')]));
  const direct = await fetch(`${rig.gateway.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oai/resp', input }) });
  t.equal(direct.status, 200);
  const refused = await fetch(`${rig.gateway.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oai/chat', input }) });
  t.equal(refused.status, 400, 'a chat route refuses what it cannot carry');
  t.match(await refused.json(), { error: { param: 'input[0].content[0].type' } });
});

t.test('/v1/chat/completions to a model marked api: responses still goes to /chat/completions', async (t) => {
  const rig = await startNativeRig(t);
  rig.answer = (_request, _body, res) => sendJson(res, 200, completion({ content: 'chat answer' }));
  const answer = await clientOf(rig.gateway.origin).chat.completions.create({ model: 'oai/resp', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(answer.choices[0]!.message.content, 'chat answer');
  t.equal(rig.oai.requests[0]!.url, '/v1/chat/completions');
  t.equal(JSON.parse(rig.oai.requests[0]!.body).model, 'gpt-5-resp');
});

t.test('the AI SDK\'s default provider over a native route', async (t) => {
  const { createOpenAI } = await import('@ai-sdk/openai');
  const { generateText } = await import('ai');
  const rig = await startNativeRig(t);
  rig.answer = (_request, _body, res) => sendJson(res, 200, responseObject([messageOutput('Hello, AI SDK.')]));
  const result = await generateText({ model: createOpenAI({ baseURL: `${rig.gateway.origin}/v1`, apiKey: 'sk-caller' })('oai/resp'), prompt: 'Hello', maxRetries: 0 });
  t.equal(result.text, 'Hello, AI SDK.');
  t.equal(result.usage.inputTokens, 20);
  t.equal(rig.oai.requests[0]!.url, '/v1/responses');
});

t.test('the AI SDK\'s streamText over a native route', async (t) => {
  const { createOpenAI } = await import('@ai-sdk/openai');
  const { streamText } = await import('ai');
  const rig = await startNativeRig(t);
  rig.answer = (_request, _body, res) => sendEvents(res, framed(responseEvents(['Str', 'eamed.'])));
  const result = streamText({ model: createOpenAI({ baseURL: `${rig.gateway.origin}/v1`, apiKey: 'sk-caller' })('oai/resp'), prompt: 'Hello', maxRetries: 0 });
  let text = '';
  for await (const part of result.textStream) text += part;
  t.equal(text, 'Streamed.');
  t.equal(await result.finishReason, 'stop');
  t.equal((await result.usage).outputTokens, 6);
});
