import OpenAI, { APIError } from 'openai';
import t from 'tap';
import { geminiGateway, geminiSse, response, USAGE } from '../helpers/mock-gemini.js';
import { readDataEvents } from '../helpers/sse-upstream.js';

// streamGenerateContent?alt=sse through a gemini route, records cut into 5-byte reads (UTF-8 characters and
// CRLF pairs split between reads), read by the official openai client.

const ask = (client: OpenAI, extra: Record<string, unknown> = {}, model = 'gem/flash') =>
  client.chat.completions.stream({ model, messages: [{ role: 'user', content: 'weather?' }], stream: true, ...extra } as never);

t.test('text in many records, cut at awkward byte boundaries: content in order, stop, [DONE] at the end of the body', async (t) => {
  const records = [
    response([{ text: 'Thinking about é…', thought: true }]),
    response([{ text: 'Grüße ' }]),
    response([{ text: 'aus Köln 🌧' }], undefined, { promptTokenCount: 4, totalTokenCount: 4 }),
    response([{ text: '!' }], 'STOP', { promptTokenCount: 4, candidatesTokenCount: 6, thoughtsTokenCount: 3, totalTokenCount: 13 }),
  ];
  const { client, mock } = await geminiGateway(t, () => ({ records, pieceSize: 5 }));
  const stream = ask(client, { stream_options: { include_usage: true } });
  const completion = await stream.finalChatCompletion();
  t.equal(completion.choices[0]!.message.content, 'Grüße aus Köln 🌧!');
  t.equal((completion.choices[0]!.message as unknown as { reasoning_content: string }).reasoning_content, 'Thinking about é…');
  t.equal(completion.choices[0]!.finish_reason, 'stop');
  // Usage records are snapshots: the last one stands, nothing is added up.
  t.match(completion.usage, { prompt_tokens: 4, completion_tokens: 9, total_tokens: 13, completion_tokens_details: { reasoning_tokens: 3 } });
  t.equal(mock.calls[0]!.stream, true);
  t.same(mock.violations, []);
});

t.test('a tool turn ending STOP streamed: tool_calls; two calls in one record, then one in a later record: indexes 0, 1, 2', async (t) => {
  const records = [
    response([{ functionCall: { name: 'weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnLUE=' }, { functionCall: { name: 'weather', args: { city: 'Rome' } } }]),
    response([{ functionCall: { name: 'time', args: { zone: 'CET' } } }]),
    response([], 'STOP', USAGE),
  ];
  const { client, gateway } = await geminiGateway(t, () => ({ records, pieceSize: 5 }));
  const response_ = await fetch(`${gateway.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gem/flash', messages: [{ role: 'user', content: 'weather?' }], stream: true }),
  });
  const events = await readDataEvents(response_);
  t.equal(events.at(-1), '[DONE]');
  const deltas = events.slice(0, -1).map((event) => JSON.parse(event) as { choices: { delta: { tool_calls?: { index: number }[] }; finish_reason: string | null }[] });
  t.same(deltas.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls?.map((call) => call.index) ?? []), [0, 1, 2]);
  t.same(deltas.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean), ['tool_calls']);

  const completion = await ask(client).finalChatCompletion();
  t.equal(completion.choices[0]!.finish_reason, 'tool_calls');
  const calls = completion.choices[0]!.message.tool_calls!.map((call) => call as unknown as { function: { arguments: string }; extra_content?: unknown });
  t.same(calls.map((call) => call.function.arguments), ['{"city":"Paris"}', '{"city":"Rome"}', '{"zone":"CET"}']);
  t.same(calls[0]!.extra_content, { google: { thought_signature: 'c2lnLUE=' } });
});

t.test('the call in a record before the final STOP-only record still makes tool_calls (one call across chunks)', async (t) => {
  const records = [response([{ text: 'Calling.' }]), response([{ functionCall: { name: 'f', args: {} } }]), response([{ text: '' }], 'STOP', USAGE)];
  const { client } = await geminiGateway(t, () => ({ records, pieceSize: 3 }));
  const completion = await ask(client).finalChatCompletion();
  t.equal(completion.choices[0]!.finish_reason, 'tool_calls');
  t.equal(completion.choices[0]!.message.content, 'Calling.');
});

t.test('MAX_TOKENS and SAFETY streamed', async (t) => {
  const words = ['MAX_TOKENS', 'SAFETY'];
  const { client } = await geminiGateway(t, (_call, n) => ({ records: [response([{ text: 'cut' }], words[n], USAGE)] }));
  t.equal((await ask(client).finalChatCompletion()).choices[0]!.finish_reason, 'length');
  t.equal((await ask(client).finalChatCompletion()).choices[0]!.finish_reason, 'content_filter');
});

t.test('a blocked prompt streamed: content_filter, no content', async (t) => {
  const { client } = await geminiGateway(t, () => ({ records: [{ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 } }] }));
  const completion = await ask(client).finalChatCompletion();
  t.equal(completion.choices[0]!.finish_reason, 'content_filter');
  t.notOk(completion.choices[0]!.message.content);
});

t.test('an error record after the 200 ends the stream with the gateway in-band error', async (t) => {
  const sse = geminiSse([response([{ text: 'Partial' }]), { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }]);
  const { client, gateway } = await geminiGateway(t, () => ({ sse }));
  let text = '';
  const error = await (async () => {
    try {
      const stream = await client.chat.completions.create({ model: 'gem/flash', messages: [{ role: 'user', content: 'hi' }], stream: true }, { headers: { 'x-request-id': 'gem-stream-error' } });
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    } catch (caught) {
      return caught;
    }
    return undefined;
  })();
  t.equal(text, 'Partial');
  t.type(error, APIError);
  t.match((error as APIError).error, { gateway_code: 'provider_stream_error', provider_code: 'UNAVAILABLE', message: 'The model is overloaded.', provider: 'gem' });
  t.match(await gateway.requestLog('gem-stream-error'), { gateway_code: 'provider_stream_error' });
});

t.test('a body that ends before any finishReason is incomplete: the gateway final error, never a clean end', async (t) => {
  const { gateway } = await geminiGateway(t, () => ({ records: [response([{ text: 'Half an ans' }])] }));
  const reply = await gateway.post({ model: 'gem/flash', messages: [{ role: 'user', content: 'hi' }], stream: true });
  const events = await readDataEvents(reply);
  t.notOk(events.includes('[DONE]'));
  t.match(JSON.parse(events.at(-1)!), { error: { gateway_code: 'upstream_stream_interrupted', provider: 'gem' } });
});

t.test('usage not asked for: no usage chunk, the gateway still counts', async (t) => {
  const { gateway } = await geminiGateway(t, () => ({ records: [response([{ text: 'ok' }], 'STOP', USAGE)] }));
  const reply = await gateway.post({ model: 'gem/flash', messages: [{ role: 'user', content: 'hi' }], stream: true }, { 'x-request-id': 'gem-hidden-usage' });
  const events = await readDataEvents(reply);
  t.notOk(events.some((event) => event.includes('"usage"')));
  t.match(await gateway.requestLog('gem-hidden-usage'), { prompt_tokens: 10, completion_tokens: 5 });
});
