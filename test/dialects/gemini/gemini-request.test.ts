import OpenAI, { APIError } from 'openai';
import t, { type Test } from 'tap';
import { geminiGateway, response, USAGE, type GeminiCall } from '../../helpers/mock-gemini.js';

// What a gemini route sends Gemini for each OpenAI field, read from the mock's request; the official openai
// client sends, so the request is what a real caller's would be.

const ok = () => ({ json: response([{ text: 'ok' }], 'STOP', USAGE) });

async function sent(t: Test, body: Record<string, unknown>): Promise<GeminiCall> {
  const { client, mock } = await geminiGateway(t, ok);
  await client.chat.completions.create(body as never);
  t.same(mock.violations, []);
  return mock.calls[0]!;
}

async function refused(t: Test, body: Record<string, unknown>): Promise<{ error: APIError; calls: number }> {
  const { client, mock } = await geminiGateway(t, ok);
  try {
    await client.chat.completions.create(body as never);
  } catch (error) {
    if (error instanceof APIError) return { error, calls: mock.calls.length };
    throw error;
  }
  throw new Error('the request was accepted');
}

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

t.test('system and developer → systemInstruction in order; user text and a data: image (detail dropped)', async (t) => {
  const call = await sent(t, {
    model: 'gem/plain',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
      { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'high' } }] },
    ],
  });
  t.same(call.body['systemInstruction'], { parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] });
  t.same(call.body['contents'], [{ role: 'user', parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: PNG } }] }]);
  t.same(call.body['generationConfig'], { maxOutputTokens: 8192 });
});

t.test('an https image URL is refused, naming the part: the gateway never fetches', async (t) => {
  const { error, calls } = await refused(t, { model: 'gem/plain', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] });
  t.equal(error.status, 400);
  t.match(error.error, { param: 'messages[0].content[0].image_url.url', code: 'unsupported_parameter' });
  t.equal(calls, 0);
});

t.test('a tool round: assistant calls → model functionCall parts (args byte for byte), tool results → one user content in order', async (t) => {
  const call = await sent(t, {
    model: 'gem/flash',
    messages: [
      { role: 'user', content: 'weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris","n":10000000000000000000001}' } },
          { id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '{"temp":18}' },
      { role: 'tool', tool_call_id: 'call_b', content: 'sunny, 24 degrees' },
      { role: 'user', content: 'thanks' },
    ],
  });
  t.ok(call.text.includes('{"functionCall":{"name":"weather","args":{"city":"Paris","n":10000000000000000000001}}}'), 'args spliced as written');
  const contents = call.body['contents'] as { role: string; parts: unknown[] }[];
  t.same(contents.map((content) => content.role), ['user', 'model', 'user', 'user']);
  t.same(contents[1]!.parts[0], { text: 'Checking.' });
  t.same(contents[2]!.parts, [
    { functionResponse: { name: 'weather', response: { temp: 18 } } },
    { functionResponse: { name: 'weather', response: { output: 'sunny, 24 degrees' } } },
  ]);
  // gemini-2.5 does not require signatures: none is invented.
  t.notOk(call.text.includes('thoughtSignature'));
});

t.test('a tool message whose id matches no call of the assistant turn is refused, naming it', async (t) => {
  const { error, calls } = await refused(t, {
    model: 'gem/flash',
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_zzz', content: 'x' },
    ],
  });
  t.equal(error.status, 400);
  t.match(error.error, { param: 'messages[2].tool_call_id' });
  t.equal(calls, 0);
});

t.test('tools: the caller schema with $ref and additionalProperties goes as parametersJsonSchema byte for byte', async (t) => {
  const schema = '{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"city":{"type":"string","const":"Paris"}},"properties":{"city":{"$ref":"#/$defs/city"},"days":{"type":"integer","exclusiveMinimum":0}},"additionalProperties":false,"required":["city"]}';
  const { gateway, mock } = await geminiGateway(t, ok);
  const text = `{"model":"gem/flash","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"weather","description":"Weather","parameters":${schema},"strict":true}}],"tool_choice":"required"}`;
  const reply = await gateway.post(text);
  t.equal(reply.status, 200);
  t.ok(mock.calls[0]!.text.includes(`"functionDeclarations":[{"name":"weather","description":"Weather","parametersJsonSchema":${schema}}]`));
  t.same(mock.calls[0]!.body['toolConfig'], { functionCallingConfig: { mode: 'ANY' } });
});

t.test('tool_choice auto, none and a named function', async (t) => {
  const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
  const { client, mock } = await geminiGateway(t, ok);
  for (const choice of ['auto', 'none', { type: 'function', function: { name: 'f' } }]) {
    await client.chat.completions.create({ model: 'gem/plain', messages: [{ role: 'user', content: 'hi' }], tools, tool_choice: choice } as never);
  }
  t.same(mock.calls.map((call) => call.body['toolConfig']), [
    { functionCallingConfig: { mode: 'AUTO' } },
    { functionCallingConfig: { mode: 'NONE' } },
    { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } },
  ]);
});

t.test('generationConfig: tokens, sampling, stop, seed, penalties; json_schema unchanged, json_object', async (t) => {
  const schema = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false };
  const { client, mock } = await geminiGateway(t, ok);
  await client.chat.completions.create({
    model: 'gem/plain', messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 100, temperature: 0.5, top_p: 0.9, stop: 'END', seed: 7, n: 1,
    presence_penalty: 0.1, frequency_penalty: 0.2, response_format: { type: 'json_schema', json_schema: { name: 's', schema } }, user: 'u-1', logprobs: false,
  });
  await client.chat.completions.create({ model: 'gem/plain', messages: [{ role: 'user', content: 'hi' }], max_tokens: 50, stop: ['a', 'b'], response_format: { type: 'json_object' } });
  t.same(mock.calls[0]!.body['generationConfig'], {
    stopSequences: ['END'], temperature: 0.5, topP: 0.9, seed: 7, presencePenalty: 0.1, frequencyPenalty: 0.2, maxOutputTokens: 100,
    responseMimeType: 'application/json', responseJsonSchema: schema,
  });
  t.same(mock.calls[1]!.body['generationConfig'], { stopSequences: ['a', 'b'], maxOutputTokens: 50, responseMimeType: 'application/json' });
});

t.test('refused, naming the field: output tokens above the model, n above 8, logprobs, a field with no Gemini form', async (t) => {
  const base = { model: 'gem/plain', messages: [{ role: 'user', content: 'hi' }] };
  for (const [extra, param] of [
    [{ max_completion_tokens: 9000 }, 'max_completion_tokens'],
    [{ n: 9 }, 'n'],
    [{ logprobs: true }, 'logprobs'],
    [{ modalities: ['audio'] }, 'modalities'],
    [{ parallel_tool_calls: false }, 'parallel_tool_calls'],
  ] as const) {
    const { error, calls } = await refused(t, { ...base, ...extra });
    t.equal(error.status, 400, param);
    t.equal((error.error as { param: string }).param, param);
    t.equal(calls, 0);
  }
});

t.test('reasoning_effort on a budget model: the table, clamped into thinking_budget; integers as given, 400 outside', async (t) => {
  const { client, mock } = await geminiGateway(t, ok);
  const send = (model: string, effort: unknown) => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: effort } as never);
  await send('gem/flash', 'low');
  await send('gem/flash', 'max');
  await send('gem/flash', 'none');
  await send('gem/pro', 'none');
  await send('gem/flash', 3000);
  await send('gem/flash-lite', 'minimal');
  t.same(mock.calls.map((call) => (call.body['generationConfig'] as Record<string, unknown>)['thinkingConfig']), [
    { thinkingBudget: 1024, includeThoughts: true },
    { thinkingBudget: 24576, includeThoughts: true },
    { thinkingBudget: 0 },
    { thinkingBudget: 128, includeThoughts: true },
    { thinkingBudget: 3000, includeThoughts: true },
    { thinkingBudget: 512, includeThoughts: true },
  ]);
  const { error, calls } = await refused(t, { model: 'gem/pro', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 40000 });
  t.match(error.error, { param: 'reasoning_effort', message: /from 128 to 32768/ });
  t.equal(calls, 0);
  const plain = await refused(t, { model: 'gem/plain', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'high' });
  t.match(plain.error.error, { param: 'reasoning_effort', code: 'unsupported_parameter' });
});

t.test('reasoning_effort on a levels model: the nearest supported level; none → the lowest (3.x cannot stop thinking)', async (t) => {
  const { client, mock } = await geminiGateway(t, ok);
  const send = (model: string, effort: unknown) => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: effort } as never);
  for (const effort of ['minimal', 'medium', 'xhigh', 'none']) await send('gem/pro3', effort);
  for (const effort of ['medium', 'minimal', 20000]) await send('gem/pro31', effort);
  t.same(mock.calls.map((call) => ((call.body['generationConfig'] as Record<string, Record<string, unknown>>)['thinkingConfig'])!['thinkingLevel']), [
    'low', 'high', 'high', 'low',
    'medium', 'low', 'high',
  ]);
});

t.test('thought signatures: a round trip through a second request, and a missing one on a model that requires them', async (t) => {
  const parts = [{ functionCall: { name: 'f', args: { q: 1 } }, thoughtSignature: 'U2lnbmF0dXJlIGJ5dGVzIPCfmIA=' }, { functionCall: { name: 'g', args: {} } }];
  const { client, mock } = await geminiGateway(t, (_call, n) => (n === 0 ? { json: response(parts, 'STOP', USAGE) } : ok()));
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'go' }];
  const first = await client.chat.completions.create({ model: 'gem/pro3', messages });
  const assistant = first.choices[0]!.message;
  messages.push(assistant as OpenAI.ChatCompletionMessageParam);
  for (const call of assistant.tool_calls!) messages.push({ role: 'tool', tool_call_id: call.id, content: '{"ok":true}' });
  await client.chat.completions.create({ model: 'gem/pro3', messages });
  const model = (mock.calls[1]!.body['contents'] as { role: string; parts: Record<string, unknown>[] }[])[1]!;
  t.equal(model.role, 'model');
  t.same(model.parts, [{ functionCall: { name: 'f', args: { q: 1 } }, thoughtSignature: 'U2lnbmF0dXJlIGJ5dGVzIPCfmIA=' }, { functionCall: { name: 'g', args: {} } }]);

  // A client that dropped extra_content: the first call of the turn gets Google's documented skip value.
  const bare = [{ role: 'user', content: 'go' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }, { id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c1', content: 'a' }, { role: 'tool', tool_call_id: 'c2', content: 'b' }];
  await client.chat.completions.create({ model: 'gem/pro3', messages: bare } as never);
  await client.chat.completions.create({ model: 'gem/flash', messages: bare } as never);
  const replayed = (n: number) => (mock.calls[n]!.body['contents'] as { parts: Record<string, unknown>[] }[])[1]!.parts.map((part) => part['thoughtSignature']);
  t.same(replayed(2), ['skip_thought_signature_validator', undefined]);
  t.same(replayed(3), [undefined, undefined], 'a 2.5 model gets none');
});

t.test('a message signature goes back on the last text part', async (t) => {
  const call = await sent(t, {
    model: 'gem/flash',
    messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello.', extra_content: { google: { thought_signature: 'bXNn' } } }, { role: 'user', content: 'again' }],
  });
  t.same((call.body['contents'] as { parts: unknown[] }[])[1]!.parts, [{ text: 'Hello.', thoughtSignature: 'bXNn' }]);
});

t.test('an empty message (no text, no calls) is left out: Gemini refuses a content without parts', async (t) => {
  const call = await sent(t, { model: 'gem/plain', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: '' }, { role: 'user', content: 'again' }] });
  t.same(call.body['contents'], [{ role: 'user', parts: [{ text: 'hi' }] }, { role: 'user', parts: [{ text: 'again' }] }]);
});
