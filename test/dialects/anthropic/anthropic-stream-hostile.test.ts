import t from 'tap';
import { createAnthropicStreamTranslator } from '../../../src/dialects/anthropic/stream.js';
import type { StreamStep } from '../../../src/dialects/dialect.js';
import type { SseMessage } from '../../../src/wire/sse-parser.js';
import { readTokenCounts } from '../../../src/observe/token-counts.js';
import { events, ROUTING_MODEL } from '../../helpers/anthropic-fixtures.js';

type Step = StreamStep & { index: number };

/** Translates `[event name, data]` pairs; returns every step (even after the end, to show nothing more is sent). */
function run(messages: readonly (readonly [string | undefined, string] | SseMessage)[], includeUsage = false): Step[] {
  const translator = createAnthropicStreamTranslator({ routingModel: ROUTING_MODEL, providerId: 'anthropic', hideUsage: false, includeUsage });
  return messages.map((m, index) => {
    const message: SseMessage = Array.isArray(m) ? { kind: 'event', event: m[0], data: m[1], id: undefined } : (m as SseMessage);
    // What the message still owes (blocks closed one by one) is part of its step here.
    let step = translator.translate(message);
    for (let owed = translator.owed?.(); owed !== undefined; owed = translator.owed?.()) step = { ...step, ...owed, frames: step.frames + owed.frames };
    return { ...step, index };
  });
}
const framesOf = (steps: Step[]) => steps.map((s) => s.frames).join('');
/** The deltas (with finish_reason) of every chunk with a choice. */
const deltasOf = (steps: Step[]) =>
  (events(framesOf(steps)).filter((e) => e !== '[DONE]') as { choices: { delta: object; finish_reason: string | null }[] }[])
    .filter((c) => c.choices.length > 0)
    .map((c) => ({ ...c.choices[0]!.delta, ...(c.choices[0]!.finish_reason ? { finish_reason: c.choices[0]!.finish_reason } : {}) }));

const START = ['message_start', '{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":3,"output_tokens":1}}}'] as const;
const STOP = ['message_stop', '{"type":"message_stop"}'] as const;
const text = (s: string, index = 0) => ['content_block_delta', JSON.stringify({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: s } })] as const;
const tool = (index: number, id: string, input = '{}') => ['content_block_start', `{"type":"content_block_start","index":${index},"content_block":{"type":"tool_use","id":"${id}","name":"f","input":${input}}}`] as const;
const blockStop = (index: number) => ['content_block_stop', `{"type":"content_block_stop","index":${index}}`] as const;
const stopReason = (reason: unknown) => ['message_delta', JSON.stringify({ type: 'message_delta', delta: { stop_reason: reason } })] as const;

t.test("the data's type names the event; the event line only when the data has none", async (t) => {
  const steps = run([
    START,
    ['ping', JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'a' } })],
    ['message_stop', '{"type":"ping"}'],
    ['message_stop', '{"type":"ping","type":"content_block_delta","index":0,"delta":{"type":"text_delta","t\\u0065xt":"b"}}'],
    ['message_stop', '{}'],
  ]);
  t.same(deltasOf(steps), [{ role: 'assistant', content: '' }, { content: 'a' }, { content: 'b' }, { finish_reason: 'stop' }], 'duplicate keys: the last wins; escaped keys read as JSON reads them');
  t.same(steps.map((s) => s.end), [undefined, undefined, undefined, undefined, 'done']);
});

t.test('garbage is ignored, and nothing is read after the end', async (t) => {
  const steps = run([
    ['content_block_delta', 'not json'],
    [undefined, ''],
    [undefined, 'null'],
    [undefined, '[1,2]'],
    ['content_block_delta', '{"type":"content_block_delta","index":"0","delta":"text"}'],
    ['content_block_start', '{"type":"content_block_start","index":0,"content_block":"text"}'],
    ['content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":42}}'],
    ['content_block_delta', '{"type":"content_block_delta","delta":{"type":"text_delta","text":"no index\\nline \u2028"}}'],
    ['content_block_stop', '{"type":"content_block_stop","index":{"a":1}}'],
    STOP,
    text('after the end'),
    ['error', '{"type":"error","error":{"type":"api_error","message":"late"}}'],
    STOP,
  ]);
  t.same(deltasOf(steps), [{ role: 'assistant', content: '' }, { content: 'no index\nline \u2028' }, { finish_reason: 'stop' }]);
  t.same(steps.slice(10).map((s) => s), [{ frames: '', index: 10 }, { frames: '', index: 11 }, { frames: '', index: 12 }]);
  const ids = new Set((events(framesOf(steps)).filter((e) => e !== '[DONE]') as { id: string }[]).map((c) => c.id));
  t.equal(ids.size, 1, 'one id, made up when message_start never came');
  t.match([...ids][0], /^chatcmpl-/);
});

t.test('a later message_start changes neither the id nor adds usage', async (t) => {
  const steps = run([START, ['message_start', '{"type":"message_start","message":{"id":"msg_2","usage":{"input_tokens":3}}}'], text('x'), STOP]);
  const chunks = events(framesOf(steps)).filter((e) => e !== '[DONE]') as { id: string }[];
  t.ok(chunks.every((c) => c.id === 'msg_1'));
  t.same(steps.at(-1)!.usage, { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } });
});

t.test('every stop_reason maps to its finish_reason; the first reason given is the only finish chunk', async (t) => {
  const table: [unknown, string][] = [
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['a_reason_from_the_future', 'stop'],
    ['__proto__', 'stop'],
    // No reason yet: the next message_delta's (max_tokens) stands.
    [null, 'length'],
    [7, 'length'],
  ];
  for (const [reason, expected] of table) {
    const finishes = deltasOf(run([START, stopReason(reason), stopReason('max_tokens'), STOP])).filter((d) => 'finish_reason' in d);
    t.same(finishes, [{ finish_reason: expected }], `${JSON.stringify(reason)} → ${expected}`);
  }
});

t.test('tool calls: inputs given whole, blocks left open, a block index started twice', async (t) => {
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  const steps = run([
    START,
    tool(0, 'whole', '{"a": 1.50, "a": [2]}'),
    blockStop(0),
    tool(1, 'deep', `{"x":${deep}}`),
    blockStop(1),
    tool(2, 'restarted'),
    tool(2, 'second'),
    ['content_block_delta', '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"  "}}'],
    ['content_block_delta', '{"type":"content_block_delta","index":9,"delta":{"type":"input_json_delta","partial_json":"{\\"orphan\\":1}"}}'],
    ['content_block_start', '{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":5,"input":null}}'],
    stopReason('tool_use'),
    STOP,
  ]);
  const deltas = deltasOf(steps);
  const args = new Map<number, string>();
  const ids: unknown[] = [];
  for (const d of deltas as { tool_calls?: { index: number; id?: string; function: { arguments: string } }[] }[]) {
    for (const call of d.tool_calls ?? []) {
      if (call.id !== undefined) ids.push(call.id);
      args.set(call.index, (args.get(call.index) ?? '') + call.function.arguments);
    }
  }
  t.same(ids, ['whole', 'deep', 'restarted', 'second', ''], 'numbered in start order; an id that is not a string is empty');
  t.equal(args.get(0), '{"a": 1.50, "a": [2]}', 'an input given whole at the start is its own text');
  t.equal(args.get(1), `{"x":${deep}}`);
  t.equal(args.get(2), '{}', 'a block started again is closed first');
  t.equal(args.get(3), '  {}', 'whitespace is no argument: the call still ends as an object');
  t.equal(args.get(4), '{}', 'a block left open is closed before the finish chunk');
  t.same(deltas.at(-1), { finish_reason: 'tool_calls' });
  t.notMatch(framesOf(steps), /orphan/, 'a fragment for no open tool call is dropped');
});

t.test('a message_delta with usage alone closes no block', async (t) => {
  const fragment = (json: string) => ['content_block_delta', JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: json } })] as const;
  const steps = run([START, tool(0, 'a'), fragment('{"x":'), ['message_delta', '{"type":"message_delta","delta":{},"usage":{"output_tokens":9}}'], fragment('1}'), blockStop(0), stopReason('tool_use'), STOP]);
  const args = (deltasOf(steps) as { tool_calls?: { function: { arguments: string } }[] }[]).flatMap((d) => d.tool_calls ?? []).map((c) => c.function.arguments);
  t.equal(args.join(''), '{"x":1}');
  t.equal(steps[3]!.usage!.completion_tokens, 9, 'its usage still counts');
});

t.test('thinking blocks: extra fields kept, a missing signature left missing', async (t) => {
  const steps = run([
    START,
    ['content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"pre ","future":{"n":1.0}}}'],
    ['content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"post"}}'],
    blockStop(0),
    ['content_block_start', '{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"","signature":""}}'],
    ['content_block_delta', '{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"first"}}'],
    ['content_block_delta', '{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"second"}}'],
    STOP,
  ]);
  const frames = framesOf(steps);
  t.match(frames, /"thinking_blocks":\[\{"type":"thinking","thinking":"pre post","future":\{"n":1\.0\}\}\]/);
  t.match(frames, /"thinking_blocks":\[\{"type":"thinking","thinking":"","signature":"second"\}\]/, 'a block still open at the end is sent; the last signature stands');
  t.same(deltasOf(steps).filter((d) => 'reasoning_content' in d), [{ reasoning_content: 'pre ' }, { reasoning_content: 'post' }]);
});

t.test('usage: the latest figure of each field; figures that are not counts reach the engine as such', async (t) => {
  const steps = run(
    [
      ['message_start', '{"type":"message_start","message":{"id":"m","usage":{"input_tokens":"12","cache_read_input_tokens":5,"output_tokens":1}}}'],
      ['message_delta', '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1e400,"cache_read_input_tokens":null}}'],
      STOP,
    ],
    true,
  );
  const usage = steps.at(-1)!.usage!;
  t.equal(usage.prompt_tokens, '12', 'the accounting gets the figure that is not a count, not a sum made of it');
  t.equal(usage.completion_tokens, Infinity);
  t.same(usage.prompt_tokens_details, { cached_tokens: 5, cache_write_tokens: 0 }, 'null leaves the earlier figure');
  t.same(readTokenCounts(usage).anomalies, { prompt_tokens: 'not_a_number', completion_tokens: 'too_large' }, 'the engine refuses them as counts');
  const chunk = events(framesOf(steps)).at(-2) as { usage: unknown };
  t.same(chunk.usage, { prompt_tokens: null, completion_tokens: null, total_tokens: null, prompt_tokens_details: { cached_tokens: 5, cache_write_tokens: 0 } }, 'the caller sees null, never a bogus figure');
  const odd = run([['message_start', '{"type":"message_start","message":{"usage":{"input_tokens":-4,"cache_read_input_tokens":10,"output_tokens":2.5}}}'], STOP], true);
  t.same(readTokenCounts(odd.at(-1)!.usage!).anomalies, { prompt_tokens: 'negative', completion_tokens: 'fractional' }, 'never hidden by a sum that looks right (-4 + 10)');
  t.same((events(framesOf(odd)).at(-2) as { usage: unknown }).usage, { prompt_tokens: null, completion_tokens: null, total_tokens: null, prompt_tokens_details: { cached_tokens: 10, cache_write_tokens: 0 } });
  const huge = run([['message_start', `{"type":"message_start","message":{"usage":{"input_tokens":${Number.MAX_SAFE_INTEGER},"cache_creation_input_tokens":10,"output_tokens":1}}}`], STOP], true);
  t.same(readTokenCounts(huge.at(-1)!.usage!).anomalies, { prompt_tokens: 'too_large' }, 'a sum past 2^53 is not a count');
  t.match((events(framesOf(huge)).at(-2) as { usage: unknown }).usage, { prompt_tokens: null, completion_tokens: 1, total_tokens: null });
});

t.test('error events in every shape end the stream with the gateway error event', async (t) => {
  const cases: [string | undefined, string, string, string | null][] = [
    ['error', '{"type":"error","error":{"type":"api_error","message":"Internal server error"}}', 'Internal server error', 'api_error'],
    ['error', 'not json', 'The provider "anthropic" reported an error mid-stream.', null],
    [undefined, '{"type":"error","error":"plain text"}', 'plain text', null],
    ['error', '{"error":{"type":"","message":""}}', 'The provider "anthropic" reported an error mid-stream.', null],
    ['message_delta', '{"type":"error","error":{"type":"rate_limit_error","message":"slow down","type":"overloaded_error"}}', 'slow down', 'overloaded_error'],
  ];
  for (const [event, data, message, providerCode] of cases) {
    const steps = run([START, [event, data], STOP]);
    t.equal(steps[1]!.end, 'error', data);
    t.match(events(steps[1]!.frames), [{ error: { message, provider_code: providerCode, gateway_code: 'provider_stream_error', type: providerCode ?? 'server_error', code: 'provider_stream_error' } }]);
    t.equal(steps[2]!.frames, '', 'nothing after the error event');
  }
});

t.test('comments pass through; pings send nothing', async (t) => {
  const steps = run([{ kind: 'comment', text: 'keep-alive' }, ['ping', '{"type":"ping"}'], ['ping', '']]);
  t.same(steps.map((s) => s.frames), [': keep-alive\n\n', '', '']);
});
