import t from 'tap';
import { geminiGateway, response, USAGE } from '../../helpers/mock-gemini.js';

// Non-streamed answers through a gemini route: the real engine, a node:http Gemini mock, the official openai client.

t.test('text answer: content, stop, usage, the routing string as model', async (t) => {
  const { client, mock } = await geminiGateway(t, () => ({ json: response([{ text: 'Hello ' }, { text: 'there' }], 'STOP', USAGE) }));
  const completion = await client.chat.completions.create({ model: 'gem/plain', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(completion.model, 'gem/plain');
  t.equal(completion.choices[0]!.message.content, 'Hello there');
  t.equal(completion.choices[0]!.finish_reason, 'stop');
  t.match(completion.usage, { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
  t.equal(mock.calls[0]!.model, 'gemini-2.0-flash');
  t.equal(mock.calls[0]!.stream, false);
  t.same(mock.violations, []);
});

t.test('a tool turn ending STOP is tool_calls: ids kept or made, args as JSON text, thoughts as reasoning_content', async (t) => {
  const parts = [
    { text: 'Let me think.', thought: true },
    { functionCall: { name: 'weather', args: { city: 'Paris', days: 3 } }, thoughtSignature: 'c2lnLTE=' },
    { functionCall: { id: 'fc-2', name: 'time', args: {} } },
  ];
  const { client } = await geminiGateway(t, () => ({ json: response(parts, 'STOP', USAGE) }));
  const completion = await client.chat.completions.create({ model: 'gem/flash', messages: [{ role: 'user', content: 'weather?' }] });
  const choice = completion.choices[0]!;
  t.equal(choice.finish_reason, 'tool_calls');
  t.equal(choice.message.content, null);
  t.equal((choice.message as unknown as { reasoning_content: string }).reasoning_content, 'Let me think.');
  const calls = choice.message.tool_calls!.map((call) => call as unknown as { id: string; function: { name: string; arguments: string }; extra_content?: unknown });
  t.match(calls[0]!.id, /^call_[0-9a-f]{32}$/);
  t.same(calls.map((call) => [call.function.name, call.function.arguments]), [['weather', '{"city":"Paris","days":3}'], ['time', '{}']]);
  t.equal(calls[1]!.id, 'fc-2');
  t.same(calls[0]!.extra_content, { google: { thought_signature: 'c2lnLTE=' } });
  t.equal(calls[1]!.extra_content, undefined);
});

t.test('each finishReason as OpenAI finish_reason', async (t) => {
  const table: [string, string][] = [
    ['STOP', 'stop'], ['MAX_TOKENS', 'length'], ['SAFETY', 'content_filter'], ['RECITATION', 'content_filter'],
    ['BLOCKLIST', 'content_filter'], ['PROHIBITED_CONTENT', 'content_filter'], ['SPII', 'content_filter'], ['LANGUAGE', 'content_filter'],
    ['IMAGE_SAFETY', 'content_filter'], ['IMAGE_PROHIBITED_CONTENT', 'content_filter'], ['IMAGE_RECITATION', 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', 'stop'], ['OTHER', 'stop'], ['FINISH_REASON_UNSPECIFIED', 'stop'], ['A_REASON_FROM_2027', 'stop'],
  ];
  const { client } = await geminiGateway(t, (_call, n) => ({ json: response([{ text: 'x' }], table[n]![0], USAGE) }));
  for (const [gemini, openai] of table) {
    const completion = await client.chat.completions.create({ model: 'gem/plain', messages: [{ role: 'user', content: 'hi' }] });
    t.equal(completion.choices[0]!.finish_reason, openai, gemini);
  }
});

t.test('a blocked prompt (no candidates, blockReason) is one empty choice, content_filter', async (t) => {
  const { client } = await geminiGateway(t, () => ({ json: { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 } } }));
  const completion = await client.chat.completions.create({ model: 'gem/plain', messages: [{ role: 'user', content: 'bad' }] });
  t.equal(completion.choices.length, 1);
  t.equal(completion.choices[0]!.message.content, null);
  t.equal(completion.choices[0]!.finish_reason, 'content_filter');
  t.match(completion.usage, { prompt_tokens: 7, completion_tokens: 0, total_tokens: 7 });
});

t.test('usage: tool-use prompt tokens in the prompt, thoughts in the completion and as reasoning_tokens, cached tokens', async (t) => {
  const usage = { promptTokenCount: 1000, cachedContentTokenCount: 600, toolUsePromptTokenCount: 20, candidatesTokenCount: 50, thoughtsTokenCount: 300, totalTokenCount: 1370 };
  const { client, gateway } = await geminiGateway(t, () => ({ json: response([{ text: 'ok' }], 'STOP', usage) }));
  const completion = await client.chat.completions.create({ model: 'gem/flash', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-request-id': 'gem-usage' } });
  t.same(completion.usage, {
    prompt_tokens: 1020, completion_tokens: 350, total_tokens: 1370,
    prompt_tokens_details: { cached_tokens: 600 }, completion_tokens_details: { reasoning_tokens: 300 },
  });
  t.equal(completion.usage!.prompt_tokens + completion.usage!.completion_tokens, completion.usage!.total_tokens);
  t.match(await gateway.requestLog('gem-usage'), { prompt_tokens: 1020, completion_tokens: 350, cached_tokens: 600 });
});

t.test('a signature on a text part goes on the message; one on an empty part goes to the call after it', async (t) => {
  const { client } = await geminiGateway(t, (_call, n) =>
    n === 0
      ? { json: response([{ text: 'Done.', thoughtSignature: 'dGV4dA==' }], 'STOP', USAGE) }
      : { json: response([{ text: '', thoughtSignature: 'ZW1wdHk=' }, { functionCall: { name: 'f', args: { a: 1 } } }], 'STOP', USAGE) },
  );
  const first = await client.chat.completions.create({ model: 'gem/flash', messages: [{ role: 'user', content: 'hi' }] });
  t.same((first.choices[0]!.message as unknown as { extra_content: unknown }).extra_content, { google: { thought_signature: 'dGV4dA==' } });
  const second = await client.chat.completions.create({ model: 'gem/flash', messages: [{ role: 'user', content: 'hi' }] });
  t.same((second.choices[0]!.message.tool_calls![0] as unknown as { extra_content: unknown }).extra_content, { google: { thought_signature: 'ZW1wdHk=' } });
  t.equal((second.choices[0]!.message as unknown as { extra_content?: unknown }).extra_content, undefined);
});
