import { APIError } from 'openai';
import t from 'tap';
import { geminiGateway, geminiSse, response, USAGE } from '../../helpers/mock-gemini.js';
import { readDataEvents } from '../../helpers/sse-upstream.js';

// Hostile callers and a hostile Gemini: every request settles with a clear answer in the gateway's envelope.

const ask = { model: 'gem/flash', messages: [{ role: 'user', content: 'hi' }] };

t.test('a 200 body that is not an answer, or is an error object, is 502 invalid_upstream_response', async (t) => {
  const bodies = [{}, { error: { code: 500, message: 'x', status: 'INTERNAL' } }, 'not json', { candidates: 'nope' }];
  const { gateway } = await geminiGateway(t, (_call, n) => ({ json: bodies[n] }));
  for (let i = 0; i < bodies.length; i++) {
    const reply = await gateway.post(ask);
    t.equal(reply.status, 502);
    t.match(((await reply.json()) as { error: unknown }).error, { gateway_code: 'invalid_upstream_response', provider: 'gem' });
  }
});

t.test('parts of the wrong types count as absent; a functionCall without args gets {}', async (t) => {
  const parts = [{ text: 42 }, null, 'str', { functionCall: { name: 7, args: 'x' } }, { functionCall: { name: 'ok' } }, { thoughtSignature: 5, text: 'fine' }];
  const { client } = await geminiGateway(t, () => ({ json: response(parts as never, 'STOP', { promptTokenCount: -1, candidatesTokenCount: 1.5, totalTokenCount: 'x' } as never) }));
  const completion = await client.chat.completions.create(ask as never);
  t.equal(completion.choices[0]!.message.content, 'fine');
  t.same(completion.choices[0]!.message.tool_calls!.map((call) => (call.type === 'function' ? [call.function.name, call.function.arguments] : [])), [['', '{}'], ['ok', '{}']]);
  t.equal(completion.choices[0]!.finish_reason, 'tool_calls');
  t.notOk(completion.usage?.prompt_tokens, 'a figure that is not a count is left out');
});

t.test('a streamed record that is not JSON ends the stream with an error event, never a clean end', async (t) => {
  const { gateway } = await geminiGateway(t, () => ({ sse: `${geminiSse([response([{ text: 'a' }])])}data: {"candidates": [\r\n\r\n${geminiSse([response([{ text: 'b' }], 'STOP', USAGE)])}` }));
  const events = await readDataEvents(await gateway.post({ ...ask, stream: true }));
  t.notOk(events.includes('[DONE]'));
  t.match(JSON.parse(events.at(-1)!), { error: { gateway_code: 'provider_stream_error', provider: 'gem' } });
  t.notOk(events.some((event) => event.includes('"b"')), 'nothing after the error is read');
});

t.test('a streamed record over the event limit ends the stream with invalid_upstream_response', async (t) => {
  const huge = response([{ text: 'x'.repeat(200_000) }], 'STOP', USAGE);
  const { gateway } = await geminiGateway(t, () => ({ records: [response([{ text: 'start' }]), huge], pieceSize: 65536 }), { maxUpstreamBodyBytes: 64 * 1024 });
  const events = await readDataEvents(await gateway.post({ ...ask, stream: true }));
  t.match(JSON.parse(events.at(-1)!), { error: { gateway_code: 'invalid_upstream_response' } });
});

t.test('hostile callers: arguments that are not a JSON object, a tool message with no id, a non-string signature', async (t) => {
  const { client, mock } = await geminiGateway(t, () => ({ json: response([{ text: 'ok' }], 'STOP', USAGE) }));
  const cases: [unknown[], string][] = [
    [[{ role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{"a":' } }] }], 'messages[1].tool_calls[0].function.arguments'],
    [[{ role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '[1,2]' } }] }], 'messages[1].tool_calls[0].function.arguments'],
    [[{ role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', content: 'x' }], 'messages[2].tool_call_id'],
    [[{ role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' }, extra_content: { google: { thought_signature: 5 } } }] }], 'messages[1].tool_calls[0].extra_content.google.thought_signature'],
    [[{ role: 'function', name: 'f', content: 'x' }], 'messages[1].role'],
    [[{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }], 'messages[1].content[0]'],
  ];
  for (const [messages, param] of cases) {
    const error = await client.chat.completions.create({ model: 'gem/flash', messages: [{ role: 'user', content: 'hi' }, ...messages] } as never).then(() => undefined, (caught: unknown) => caught);
    t.type(error, APIError, param);
    t.equal((error as APIError).status, 400, param);
    t.equal(((error as APIError).error as { param: string }).param, param);
  }
  t.equal(mock.calls.length, 0, 'Gemini was never called');
});
