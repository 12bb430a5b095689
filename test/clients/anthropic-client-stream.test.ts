import { APIError } from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import t from 'tap';
import { setUpAnthropicClient } from './anthropic-client.js';
import { anthropicSse, streamOf } from '../helpers/mock-anthropic.js';
import { readDataEvents } from '../helpers/sse-upstream.js';

// Streams through the official openai client from a mock Anthropic provider that sends `event:` lines, cut
// into small byte pieces (so events, lines and UTF-8 characters split between reads) (issue 11).

const setUp = setUpAnthropicClient;

const ask = { model: 'claude/plain', messages: [{ role: 'user' as const, content: 'hi' }], stream: true as const };

async function chunksOf(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const text = (...parts: string[]) => ({ start: { type: 'text', text: '' }, deltas: parts.map((part) => ({ type: 'text_delta', text: part })) });

t.test('streamed text in 5-byte reads: one id, the routing model, role first, usage last when asked', async (t) => {
  const usage = { input_tokens: 12, output_tokens: 9, cache_read_input_tokens: 1000, cache_creation_input_tokens: 50 };
  const { upstream, client, wireChecked } = await setUp(t, () => ({ sse: anthropicSse(streamOf([text('Bonjour ', '👋 é', 'tè')], 'end_turn', usage)), pieceSize: 5 }));
  const chunks = await chunksOf(await client.chat.completions.create({ ...ask, stream_options: { include_usage: true } }));
  t.equal(new Set(chunks.map((chunk) => chunk.id)).size, 1, 'one id');
  t.ok(chunks.every((chunk) => chunk.model === 'claude/plain' && chunk.object === 'chat.completion.chunk'));
  t.match(chunks[0]!.choices[0]!.delta, { role: 'assistant', content: '' });
  t.equal(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'Bonjour 👋 étè');
  t.equal(chunks.filter((chunk) => chunk.choices[0]?.finish_reason).map((chunk) => chunk.choices[0]!.finish_reason).join(), 'stop');
  const last = chunks.at(-1)!;
  t.strictSame(last.choices, []);
  t.strictSame(last.usage as unknown, { prompt_tokens: 1062, completion_tokens: 9, total_tokens: 1071, prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 50 } });
  t.match(upstream.bodies[0], { model: 'claude-plain-1', stream: true, max_tokens: 8192 });
  wireChecked();
});

t.test('without include_usage no usage reaches the caller, and the stream ends with [DONE]', async (t) => {
  const { gateway, wireChecked } = await setUp(t, () => ({ sse: anthropicSse(streamOf([text('ok')], 'end_turn')), pieceSize: 3 }));
  const events = await readDataEvents(await gateway.post(ask, { 'x-request-id': 'anthropic-no-usage' }));
  t.equal(events.at(-1), '[DONE]');
  t.notOk(events.slice(0, -1).some((event) => 'usage' in (JSON.parse(event) as object) && (JSON.parse(event) as { usage: unknown }).usage), 'no usage');
  t.match(await gateway.requestLog('anthropic-no-usage'), { prompt_tokens: 10, completion_tokens: 5, gateway_code: null });
  wireChecked();
});

t.test('streamed tool calls: several in one turn, one without arguments, indices from 0', async (t) => {
  const blocks = [
    text('Let me check.'),
    {
      start: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} },
      deltas: [
        { type: 'input_json_delta', partial_json: '' },
        { type: 'input_json_delta', partial_json: '{"loc' },
        { type: 'input_json_delta', partial_json: 'ation": "Paris"}' },
      ],
    },
    { start: { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} }, deltas: [] },
  ];
  const { client, wireChecked } = await setUp(t, () => ({ sse: anthropicSse(streamOf(blocks, 'tool_use')), pieceSize: 4 }));
  const chunks = await chunksOf(await client.chat.completions.create(ask));
  const calls = new Map<number, { id?: string; name?: string; arguments: string }>();
  for (const call of chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? [])) {
    const entry = calls.get(call.index) ?? { arguments: '' };
    if (call.id) entry.id = call.id;
    if (call.function?.name) entry.name = call.function.name;
    entry.arguments += call.function?.arguments ?? '';
    calls.set(call.index, entry);
  }
  t.strictSame([...calls.entries()], [
    [0, { id: 'toolu_1', name: 'get_weather', arguments: '{"location": "Paris"}' }],
    [1, { id: 'toolu_2', name: 'get_time', arguments: '{}' }],
  ]);
  t.equal(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0]?.finish_reason, 'tool_calls');

  // The official client's own accumulator agrees.
  const final = await client.chat.completions.stream({ ...ask }).finalChatCompletion();
  t.strictSame(final.choices[0]!.message.tool_calls?.map((call) => (call.type === 'function' ? [call.id, call.function.arguments] : [])), [
    ['toolu_1', '{"location": "Paris"}'],
    ['toolu_2', '{}'],
  ]);
  wireChecked();
});

t.test('streamed thinking: reasoning_content deltas, then the block with its signature', async (t) => {
  const blocks = [
    {
      start: { type: 'thinking', thinking: '' },
      deltas: [
        { type: 'thinking_delta', thinking: 'Two plus ' },
        { type: 'thinking_delta', thinking: 'two.' },
        { type: 'signature_delta', signature: 'sig-Zm9v==' },
      ],
    },
    text('4'),
  ];
  const { upstream, client, wireChecked } = await setUp(t, () => ({ sse: anthropicSse(streamOf(blocks, 'end_turn')), pieceSize: 6 }));
  const chunks = await chunksOf(await client.chat.completions.create({ ...ask, model: 'claude/adaptive', reasoning_effort: 'high' }));
  const deltas = chunks.map((chunk) => (chunk.choices[0]?.delta ?? {}) as Record<string, unknown>);
  t.equal(deltas.map((delta) => delta['reasoning_content'] ?? '').join(''), 'Two plus two.');
  t.strictSame(deltas.flatMap((delta) => (delta['thinking_blocks'] as unknown[] | undefined) ?? []), [{ type: 'thinking', thinking: 'Two plus two.', signature: 'sig-Zm9v==' }]);
  t.equal(deltas.map((delta) => delta['content'] ?? '').join(''), '4');
  t.match(upstream.bodies[0], { thinking: { type: 'adaptive' }, output_config: { effort: 'high' } });
  wireChecked();
});

t.test('streamed stop reasons: max_tokens is length, refusal is content_filter', async (t) => {
  const { client, wireChecked } = await setUp(t, (body) => ({ sse: anthropicSse(streamOf([text('x')], String((body['metadata'] as Record<string, unknown>)['user_id']))) }));
  for (const [stop, finish] of [['max_tokens', 'length'], ['refusal', 'content_filter'], ['pause_turn', 'stop']] as const) {
    const chunks = await chunksOf(await client.chat.completions.create({ ...ask, user: stop }));
    t.equal(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0]?.finish_reason, finish, `${stop} -> ${finish}`);
  }
  wireChecked();
});

t.test('an error event mid-stream is the gateway error event, never a finish_reason, and no [DONE]', async (t) => {
  const events = [
    ...streamOf([text('Partial')], 'end_turn').slice(0, 4),
    { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
  ];
  const { gateway, client, wireChecked } = await setUp(t, () => ({ sse: anthropicSse(events), pieceSize: 9 }));
  const error = await chunksOf(await client.chat.completions.create(ask)).catch((e: unknown) => e);
  t.type(error, APIError, 'the official client raises');
  t.match((error as APIError).message, /Overloaded/);

  const raw = await readDataEvents(await gateway.post(ask, { 'x-request-id': 'anthropic-error' }));
  t.notOk(raw.includes('[DONE]'));
  t.notOk(raw.slice(0, -1).some((event) => /finish_reason":"(stop|length)/.test(event)), 'no finish_reason before the error');
  t.match(JSON.parse(raw.at(-1)!), { error: { message: 'Overloaded', gateway_code: 'provider_stream_error', provider: 'claude', provider_code: 'overloaded_error' } });
  t.match(await gateway.requestLog('anthropic-error'), { gateway_code: 'provider_stream_error' });
  wireChecked();
});
