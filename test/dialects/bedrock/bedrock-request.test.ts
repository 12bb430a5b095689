import { APIError } from 'openai';
import t from 'tap';
import { bedrockGateway } from '../../helpers/bedrock-gateway.js';
import { textAnswer, type BedrockCall } from '../../helpers/mock-bedrock.js';

// What a bedrock route sends Converse for each OpenAI field, read from the mock's request (the official openai
// client sends); what it refuses with 400 naming the field, nothing sent.

const { client, mock } = await bedrockGateway(t, () => ({ json: textAnswer('ok') }));

async function sent(body: Record<string, unknown>): Promise<BedrockCall> {
  const before = mock.calls.length;
  await client.chat.completions.create(body as never);
  t.strictSame(mock.violations, []);
  t.equal(mock.calls.length, before + 1);
  return mock.calls.at(-1)!;
}

async function refused(body: Record<string, unknown>): Promise<APIError> {
  const before = mock.calls.length;
  try {
    await client.chat.completions.create(body as never);
  } catch (error) {
    if (!(error instanceof APIError)) throw error;
    t.equal(mock.calls.length, before, 'nothing sent');
    return error;
  }
  throw new Error('the request was accepted');
}

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const user = (content: unknown) => ({ role: 'user', content });

t.test('system and developer → system in order; same-role turns merged; empty texts left out; a data: image (detail dropped)', async (t) => {
  const call = await sent({
    model: 'brk/nova',
    messages: [
      { role: 'system', content: 'Be brief.' },
      user('Hello'),
      { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }, { type: 'text', text: '' }] },
      user([{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${PNG}`, detail: 'high' } }]),
      { role: 'assistant', content: '' },
      user(''),
    ],
  });
  t.same(call.body['system'], [{ text: 'Be brief.' }, { text: 'Answer in French.' }]);
  t.same(call.body['messages'], [{ role: 'user', content: [{ text: 'Hello' }, { text: 'What is this?' }, { image: { format: 'jpeg', source: { bytes: PNG } } }] }]);
  t.equal(call.modelId, 'amazon.nova-pro-v1:0');
  t.equal(call.rawPath, '/model/amazon.nova-pro-v1%3A0/converse');
  t.same(call.body['inferenceConfig'], { maxTokens: 5000 }, "absent max_tokens: the model's max_output_tokens");
});

t.test('an ARN is one path segment: its colons and slash percent-encoded', async (t) => {
  const call = await sent({ model: 'brk/arn', messages: [user('x')] });
  t.equal(call.rawPath, '/model/arn%3Aaws%3Abedrock%3Aus-west-2%3A123456789012%3Aapplication-inference-profile%2Fa1b2c3/converse');
  t.equal(call.modelId, 'arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/a1b2c3');
  t.equal(call.body['inferenceConfig'], undefined, 'no max_output_tokens, no max_tokens: no maxTokens');
});

t.test('an http(s) image or another media type: 400 naming the part, never fetched', async (t) => {
  const web = await refused({ model: 'brk/nova', messages: [user([{ type: 'text', text: 'x' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }])] });
  t.equal(web.status, 400);
  t.match(web.error, { param: 'messages[0].content[1].image_url.url', code: 'unsupported_parameter' });
  const bmp = await refused({ model: 'brk/nova', messages: [user([{ type: 'image_url', image_url: { url: `data:image/bmp;base64,${PNG}` } }])] });
  t.match(bmp.error, { param: 'messages[0].content[0].image_url.url' });
});

t.test('inferenceConfig: max_completion_tokens before max_tokens, temperature, top_p, stop as a string or a list', async (t) => {
  const call = await sent({ model: 'brk/nova', messages: [user('x')], max_completion_tokens: 50, max_tokens: 60, temperature: 0.25, top_p: 0.9, stop: 'END' });
  t.equal(call.bodyBytes.toString().match(/"inferenceConfig":(\{[^}]*\})/)![1], '{"maxTokens":50,"temperature":0.25,"topP":0.9,"stopSequences":["END"]}');
  const list = await sent({ model: 'brk/nova', messages: [user('x')], max_tokens: 5000, stop: ['a', 'b'] });
  t.same(list.body['inferenceConfig'], { maxTokens: 5000, stopSequences: ['a', 'b'] });
  const over = await refused({ model: 'brk/nova', messages: [user('x')], max_tokens: 5001 });
  t.match(over.error, { param: 'max_tokens', code: 'invalid_value' });
  t.equal(over.status, 400);
});

t.test('fields Converse cannot express: 400 unsupported_parameter naming each; their defaults (and null) accepted and not sent', async (t) => {
  for (const [field, value] of [['n', 2], ['logprobs', true], ['top_logprobs', 2], ['logit_bias', { '50256': -100 }], ['presence_penalty', 0.5], ['frequency_penalty', -1], ['seed', 7], ['parallel_tool_calls', false]] as const) {
    const error = await refused({ model: 'brk/nova', messages: [user('x')], [field]: value });
    t.match(error.error, { param: field, code: 'unsupported_parameter' }, field);
  }
  const call = await sent({ model: 'brk/nova', messages: [user('x')], n: 1, logprobs: false, top_logprobs: 0, logit_bias: {}, presence_penalty: 0, frequency_penalty: 0, seed: null, user: 'u-1' });
  t.same(Object.keys(call.body), ['messages', 'inferenceConfig']);
});

t.test('tools: toolSpec with the schema as sent; tool_choice auto, required, a named function; none leaves the tools out', async (t) => {
  const tools = [{ type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object', properties: { a: { type: 'integer' } } } } }, { type: 'function', function: { name: 'g' } }];
  const specs = [
    { toolSpec: { name: 'f', description: 'does f', inputSchema: { json: { type: 'object', properties: { a: { type: 'integer' } } } } } },
    { toolSpec: { name: 'g', inputSchema: { json: { type: 'object', properties: {} } } } },
  ];
  for (const [choice, toolChoice] of [['auto', { auto: {} }], ['required', { any: {} }], [{ type: 'function', function: { name: 'g' } }, { tool: { name: 'g' } }]] as const) {
    const call = await sent({ model: 'brk/nova', messages: [user('x')], tools, tool_choice: choice });
    t.same(call.body['toolConfig'], { tools: specs, toolChoice }, JSON.stringify(choice));
  }
  const none = await sent({ model: 'brk/nova', messages: [user('x')], tools, tool_choice: 'none' });
  t.equal(none.body['toolConfig'], undefined);
});

t.test('tool history: toolUse with the arguments as an object, results as toolResult merged with the next user text; without toolConfig refused', async (t) => {
  const history = [
    user('Weather?'),
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a": 1.50, "b":[1]}' } }, { id: 'c2', type: 'function', function: { name: 'g', arguments: '' } }] },
    { role: 'tool', tool_call_id: 'c1', content: 'one' },
    { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: 'two' }] },
    user('And?'),
  ];
  const tools = [{ type: 'function', function: { name: 'f' } }, { type: 'function', function: { name: 'g' } }];
  const call = await sent({ model: 'brk/nova', messages: history, tools });
  t.match(call.bodyBytes.toString(), '{"toolUse":{"toolUseId":"c1","name":"f","input":{"a": 1.50, "b":[1]}}},{"toolUse":{"toolUseId":"c2","name":"g","input":{}}}');
  t.same((call.body['messages'] as unknown[])[2], { role: 'user', content: [{ toolResult: { toolUseId: 'c1', content: [{ text: 'one' }] } }, { toolResult: { toolUseId: 'c2', content: [{ text: 'two' }] } }, { text: 'And?' }] });
  t.match((await refused({ model: 'brk/nova', messages: history, tools, tool_choice: 'none' })).error, { param: 'tool_choice', code: 'unsupported_parameter' });
  t.match((await refused({ model: 'brk/nova', messages: history })).error, { param: 'tools' });
  const bad = await refused({ model: 'brk/nova', messages: [user('x'), { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1]' } }] }], tools });
  t.match(bad.error, { param: 'messages[1].tool_calls[0].function.arguments' });
});

t.test('reasoning on a budget model: levels by the table, clamped below maxTokens; an integer in [1024, maxTokens); the Anthropic thinking object as sent', async (t) => {
  const budget = async (effort: unknown, max?: number) => {
    const call = await sent({ model: 'brk/sonnet', messages: [user('x')], reasoning_effort: effort, ...(max ? { max_tokens: max } : {}) });
    return [(call.body['additionalModelRequestFields'] as { thinking?: { budget_tokens: number } } | undefined)?.thinking?.budget_tokens, (call.body['inferenceConfig'] as { maxTokens: number }).maxTokens];
  };
  t.same(await budget('minimal'), [1024, 64000]);
  t.same(await budget('medium'), [8192, 64000]);
  t.same(await budget('max'), [63999, 64000], 'clamped below maxTokens');
  t.same(await budget('high', 3000), [2999, 3000]);
  t.same(await budget(5000), [5000, 64000]);
  t.same(await budget('none'), [undefined, 64000]);
  t.match((await refused({ model: 'brk/sonnet', messages: [user('x')], reasoning_effort: 500 })).error, { param: 'reasoning_effort' });
  t.match((await refused({ model: 'brk/sonnet', messages: [user('x')], reasoning_effort: 4000, max_tokens: 4000 })).error, { param: 'reasoning_effort' });
  const own = await sent({ model: 'brk/sonnet', messages: [user('x')], thinking: { type: 'enabled', budget_tokens: 3000 } });
  t.equal(own.bodyBytes.toString().match(/"additionalModelRequestFields":(.*)\}$/)![1], '{"thinking":{"type":"enabled","budget_tokens":3000}}');
  t.match((await refused({ model: 'brk/nova', messages: [user('x')], reasoning_effort: 'low' })).error, { param: 'reasoning_effort', code: 'unsupported_parameter' });
  t.match((await refused({ model: 'brk/nova', messages: [user('x')], thinking: { type: 'enabled', budget_tokens: 2000 } })).error, { param: 'thinking', code: 'unsupported_parameter' });
  const none = await sent({ model: 'brk/nova', messages: [user('x')], reasoning_effort: 'none' });
  t.equal(none.body['additionalModelRequestFields'], undefined);
});

t.test('answers: each stopReason, a 2xx body that is not a Converse answer is 502 invalid_upstream_response', async (t) => {
  const { readBedrockResponse } = await import('../../../src/dialects/bedrock/response.js');
  const reasons: [string, string][] = [['end_turn', 'stop'], ['stop_sequence', 'stop'], ['tool_use', 'tool_calls'], ['max_tokens', 'length'], ['model_context_window_exceeded', 'length'], ['guardrail_intervened', 'content_filter'], ['content_filtered', 'content_filter'], ['malformed_model_output', 'stop']];
  for (const [reason, finish] of reasons) {
    const read = readBedrockResponse(JSON.stringify(textAnswer('x', { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, reason)), 'brk/nova');
    t.equal((JSON.parse(read!.text) as { choices: { finish_reason: string }[] }).choices[0]!.finish_reason, finish, reason);
  }
  const empty = JSON.parse(readBedrockResponse('{"output":{"message":{"role":"assistant","content":[]}},"stopReason":"end_turn"}', 'brk/nova')!.text) as { choices: { message: { content: unknown } }[] };
  t.equal(empty.choices[0]!.message.content, null);
  for (const text of ['{}', '{"output":{}}', '[]', 'not json', '{"output":{"message":{"content":{}}}}']) t.equal(readBedrockResponse(text, 'm'), undefined, text);
});
