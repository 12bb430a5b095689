import { APIError } from 'openai';
import t from 'tap';
import { bedrockGateway } from '../helpers/bedrock-gateway.js';
import { textAnswer, textEvents } from '../helpers/mock-bedrock.js';

// The official openai client against a bedrock route (a Claude inference profile with a Bedrock API key on the mock).

t.test('text: Converse at the encoded profile id, the answer as a chat.completion with its usage', async (t) => {
  const { mock, client } = await bedrockGateway(t, () => ({ json: textAnswer('Hello from Bedrock', { inputTokens: 12, outputTokens: 4, totalTokens: 26, cacheReadInputTokens: 6, cacheWriteInputTokens: 4 }) }));
  const answer = await client.chat.completions.create({
    model: 'brk/sonnet',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ],
    max_tokens: 100,
    temperature: 0.5,
  });
  t.equal(answer.choices[0]!.message.content, 'Hello from Bedrock');
  t.equal(answer.choices[0]!.finish_reason, 'stop');
  t.equal(answer.model, 'brk/sonnet');
  t.match(answer.id, /^chatcmpl-/);
  t.same(answer.usage, { prompt_tokens: 22, completion_tokens: 4, total_tokens: 26, prompt_tokens_details: { cached_tokens: 6, cache_write_tokens: 4 } });
  t.strictSame(mock.violations, []);
  const call = mock.calls[0]!;
  t.equal(call.rawPath, '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse');
  t.equal(call.stream, false);
  t.equal(call.bodyBytes.toString(), '{"messages":[{"role":"user","content":[{"text":"Hi"}]}],"system":[{"text":"Be brief."}],"inferenceConfig":{"maxTokens":100,"temperature":0.5}}');
});

t.test('streams with usage: text deltas, the finish chunk, the usage chunk, [DONE]; frames cut at every few bytes', async (t) => {
  const { mock, client } = await bedrockGateway(t, () => ({ events: textEvents(['Hel', 'lo ', 'there'], { inputTokens: 9, outputTokens: 3, totalTokens: 12 }), pieceSize: 7 }));
  const stream = await client.chat.completions.create({ model: 'brk/sonnet', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
  let text = '';
  const finishes: unknown[] = [];
  let usage: unknown;
  const ids = new Set<string>();
  for await (const chunk of stream) {
    ids.add(chunk.id);
    t.equal(chunk.model, 'brk/sonnet');
    text += chunk.choices[0]?.delta.content ?? '';
    if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
    if (chunk.usage) usage = chunk.usage;
  }
  t.equal(text, 'Hello there');
  t.same(finishes, ['stop']);
  t.same(usage, { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } });
  t.equal(ids.size, 1, 'one id on every chunk');
  t.equal(mock.calls[0]!.rawPath, '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream');
  t.strictSame(mock.violations, []);
});

const WEATHER = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'The weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

t.test('tools across two turns: toolUse as tool_calls (arguments as JSON text), the result back as toolResult', async (t) => {
  const { mock, client } = await bedrockGateway(t, (_call, n) =>
    n === 0
      ? { json: { output: { message: { role: 'assistant', content: [{ text: 'Let me look.' }, { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris', days: 2 } } }] } }, stopReason: 'tool_use', usage: { inputTokens: 20, outputTokens: 8, totalTokens: 28 } } }
      : { events: textEvents(['Sunny in ', 'Paris.']), cuts: [5, 13, 14, 40, 41, 97] },
  );
  const first = await client.chat.completions.create({ model: 'brk/nova', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [WEATHER], tool_choice: 'auto' });
  const message = first.choices[0]!.message;
  t.equal(first.choices[0]!.finish_reason, 'tool_calls');
  t.equal(message.content, 'Let me look.');
  t.same(message.tool_calls, [{ id: 'tooluse_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","days":2}' } }]);
  const stream = await client.chat.completions.create({
    model: 'brk/nova',
    messages: [{ role: 'user', content: 'Weather in Paris?' }, message, { role: 'tool', tool_call_id: 'tooluse_1', content: 'sunny, 24C' }, { role: 'user', content: 'Thanks' }],
    tools: [WEATHER],
    stream: true,
  });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  t.equal(text, 'Sunny in Paris.');
  t.strictSame(mock.violations, []);
  t.same(mock.calls[0]!.body['toolConfig'], { tools: [{ toolSpec: { name: 'get_weather', description: 'The weather of a city', inputSchema: { json: WEATHER.function.parameters } } }], toolChoice: { auto: {} } });
  t.same(mock.calls[1]!.body['messages'], [
    { role: 'user', content: [{ text: 'Weather in Paris?' }] },
    { role: 'assistant', content: [{ text: 'Let me look.' }, { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris', days: 2 } } }] },
    { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ text: 'sunny, 24C' }] } }, { text: 'Thanks' }] },
  ]);
});

t.test('a streamed tool call: its start, then its input pieces under its index; a second call counts from 1', async (t) => {
  const { client } = await bedrockGateway(t, () => ({
    events: [
      { messageStart: { role: 'assistant' } },
      { contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'Checking.' } } },
      { contentBlockStop: { contentBlockIndex: 0 } },
      { contentBlockStart: { contentBlockIndex: 1, start: { toolUse: { toolUseId: 'tu_a', name: 'get_weather' } } } },
      { contentBlockDelta: { contentBlockIndex: 1, delta: { toolUse: { input: '{"city":' } } } },
      { contentBlockDelta: { contentBlockIndex: 1, delta: { toolUse: { input: '"Paris"}' } } } },
      { contentBlockStop: { contentBlockIndex: 1 } },
      { contentBlockStart: { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tu_b', name: 'now' } } } },
      { contentBlockStop: { contentBlockIndex: 2 } },
      { messageStop: { stopReason: 'tool_use' } },
      { metadata: { usage: { inputTokens: 5, outputTokens: 5, totalTokens: 10 } } },
    ],
    pieceSize: 3,
  }));
  const stream = await client.chat.completions.create({ model: 'brk/nova', messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER, { type: 'function', function: { name: 'now' } }], stream: true });
  const calls: { id?: string; name?: string; arguments: string }[] = [];
  let finish: string | null = null;
  for await (const chunk of stream) {
    for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
      calls[call.index] ??= { arguments: '' };
      if (call.id) Object.assign(calls[call.index]!, { id: call.id, name: call.function?.name });
      calls[call.index]!.arguments += call.function?.arguments ?? '';
    }
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  t.same(calls, [
    { id: 'tu_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { id: 'tu_b', name: 'now', arguments: '{}' },
  ]);
  t.equal(finish, 'tool_calls');
});

t.test('reasoning: thinking asked for by reasoning_effort, the signature back byte for byte on the next turn', async (t) => {
  const signature = 'EqQBCkYIBxgCKkB+/sig==\u00e9';
  const { mock, client } = await bedrockGateway(t, (_call, n) =>
    n === 0
      ? {
          events: [
            { messageStart: { role: 'assistant' } },
            { contentBlockDelta: { contentBlockIndex: 0, delta: { reasoningContent: { text: 'Let me ' } } } },
            { contentBlockDelta: { contentBlockIndex: 0, delta: { reasoningContent: { text: 'think.' } } } },
            { contentBlockDelta: { contentBlockIndex: 0, delta: { reasoningContent: { signature } } } },
            { contentBlockStop: { contentBlockIndex: 0 } },
            { contentBlockDelta: { contentBlockIndex: 1, delta: { text: '42' } } },
            { contentBlockStop: { contentBlockIndex: 1 } },
            { messageStop: { stopReason: 'end_turn' } },
            { metadata: { usage: { inputTokens: 5, outputTokens: 50, totalTokens: 55 } } },
          ],
          pieceSize: 11,
        }
      : { json: { output: { message: { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'Again.', signature: 'sig2' } } }, { reasoningContent: { redactedContent: 'cmVkYWN0ZWQ=' } }, { text: 'Yes' }] } }, stopReason: 'end_turn', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } } },
  );
  const stream = await client.chat.completions.create({ model: 'brk/sonnet', messages: [{ role: 'user', content: 'Answer?' }], reasoning_effort: 'low', max_completion_tokens: 4000, stream: true });
  let reasoning = '';
  let content = '';
  const blocks: unknown[] = [];
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string; thinking_blocks?: unknown[] } | undefined;
    reasoning += delta?.reasoning_content ?? '';
    content += delta?.content ?? '';
    blocks.push(...(delta?.thinking_blocks ?? []));
  }
  t.equal(reasoning, 'Let me think.');
  t.equal(content, '42', 'reasoning never in content');
  t.same(blocks, [{ type: 'thinking', thinking: 'Let me think.', signature }]);
  t.same(mock.calls[0]!.body['additionalModelRequestFields'], { thinking: { type: 'enabled', budget_tokens: 2048 } });
  t.same(mock.calls[0]!.body['inferenceConfig'], { maxTokens: 4000 });
  const second = await client.chat.completions.create({
    model: 'brk/sonnet',
    messages: [{ role: 'user', content: 'Answer?' }, { role: 'assistant', content: '42', thinking_blocks: blocks } as never, { role: 'user', content: 'Sure?' }],
    reasoning_effort: 'low',
  });
  const sent = mock.calls[1]!.bodyBytes.toString();
  t.ok(sent.includes(`{"reasoningContent":{"reasoningText":{"text":"Let me think.","signature":${JSON.stringify(signature)}}}},{"text":"42"}`), 'the thinking block first, its signature as given');
  t.same(mock.calls[1]!.body['inferenceConfig'], { maxTokens: 64000 }, 'maxTokens sent with thinking: the model\'s max_output_tokens');
  const message = second.choices[0]!.message as unknown as Record<string, unknown>;
  t.equal(message['content'], 'Yes');
  t.equal(message['reasoning_content'], 'Again.');
  t.same(message['thinking_blocks'], [{ type: 'thinking', thinking: 'Again.', signature: 'sig2' }, { type: 'redacted_thinking', data: 'cmVkYWN0ZWQ=' }]);
  t.strictSame(mock.violations, []);
});

t.test("a field Converse cannot express: the client's APIError 400 naming it, nothing sent", async (t) => {
  const { mock, client } = await bedrockGateway(t, () => ({ json: textAnswer('unused') }));
  const error = await client.chat.completions.create({ model: 'brk/nova', messages: [{ role: 'user', content: 'Hi' }], logprobs: true }).catch((caught: unknown) => caught);
  t.type(error, APIError);
  t.equal((error as APIError).status, 400);
  t.match((error as APIError).error, { param: 'logprobs', code: 'unsupported_parameter' });
  t.equal(mock.calls.length, 0);
});

t.test('usage the caller did not ask for is still counted: the log line of a stream without include_usage, and of a whole answer', async (t) => {
  const { gateway, client } = await bedrockGateway(t, (call) =>
    call.stream ? { events: textEvents(['a', 'b'], { inputTokens: 30, outputTokens: 7, totalTokens: 45, cacheReadInputTokens: 8 }), pieceSize: 16 } : { json: textAnswer('c', { inputTokens: 3, outputTokens: 2, totalTokens: 5 }) },
  );
  const stream = await client.chat.completions.create({ model: 'brk/nova', messages: [{ role: 'user', content: 'Hi' }], stream: true }, { headers: { 'x-request-id': 'brk-stream-usage' } });
  for await (const chunk of stream) t.equal(chunk.usage ?? undefined, undefined, 'no usage chunk when not asked');
  t.match(await gateway.requestLog('brk-stream-usage'), { prompt_tokens: 38, completion_tokens: 7, cached_tokens: 8, usage_estimated: false, gateway_code: null });
  await client.chat.completions.create({ model: 'brk/nova', messages: [{ role: 'user', content: 'Hi' }] }, { headers: { 'x-request-id': 'brk-whole-usage' } });
  t.match(await gateway.requestLog('brk-whole-usage'), { prompt_tokens: 3, completion_tokens: 2, usage_estimated: false });
});
