import t, { type Test } from 'tap';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { events, fixture, relay, ROUTING_MODEL, type Relayed } from '../../helpers/anthropic-fixtures.js';

const PIECE_SIZES = [0, 1, 2, 3, 5, 7, 11, 64];
const noCreated = (frames: string) => frames.replace(/"created":\d+/g, '"created":0');

/** The fixture relayed whole, after checking every piece size (and CRLF line ends) gives the same frames. */
function relayEveryWay(t: Test, name: string, includeUsage = false): Relayed {
  const bytes = fixture(name);
  const whole = relay(bytes, 0, includeUsage);
  const variants = [...PIECE_SIZES.map((size) => ({ size, bytes })), { size: 3, bytes: Buffer.from(bytes.toString().replaceAll('\n', '\r\n')) }];
  for (const { size, bytes: variant } of variants) {
    const got = relay(variant, size, includeUsage);
    if (noCreated(got.frames) !== noCreated(whole.frames) || got.end !== whole.end || JSON.stringify(got.usage) !== JSON.stringify(whole.usage)) {
      t.fail(`${name} in ${size}-byte reads${variant === bytes ? '' : ' with CRLF'} differs from one read`);
    }
  }
  return whole;
}

type Chunk = { id: string; object: string; created: number; model: string; choices: { index: number; delta: Record<string, unknown>; finish_reason: string | null }[]; usage?: unknown };

/** The chunks before [DONE], checked for what every chunk shares: one id and created, the routing model. */
function chunksOf(t: Test, relayed: Relayed): Chunk[] {
  const all = events(relayed.frames);
  t.equal(all.at(-1), '[DONE]', 'the stream ends with [DONE]');
  const chunks = all.slice(0, -1) as Chunk[];
  t.ok(chunks.length > 0);
  for (const chunk of chunks) {
    t.match(chunk, { id: chunks[0]!.id, object: 'chat.completion.chunk', created: chunks[0]!.created, model: ROUTING_MODEL });
  }
  t.ok(Number.isInteger(chunks[0]!.created) && Math.abs(chunks[0]!.created - Date.now() / 1000) < 60, 'created is now, in seconds');
  return chunks;
}

const deltas = (chunks: Chunk[]): Record<string, unknown>[] => chunks.map((chunk) => (chunk.choices.length ? { ...chunk.choices[0]!.delta, finish_reason: chunk.choices[0]!.finish_reason } : { usage: chunk.usage }));

/** The chunks as the official openai client assembles them. */
async function assembled(chunks: Chunk[]) {
  const lines = chunks.map((chunk) => `${JSON.stringify(chunk)}\n`).join('');
  const stream = ChatCompletionStream.fromReadableStream(new Blob([lines]).stream());
  return stream.finalChatCompletion();
}

t.test('text: the documented basic stream', async (t) => {
  const relayed = relayEveryWay(t, 'text.sse');
  t.equal(relayed.end, 'done');
  const chunks = chunksOf(t, relayed);
  t.equal(chunks[0]!.id, 'msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY', "the id is Anthropic's");
  t.same(deltas(chunks), [
    { role: 'assistant', content: '', finish_reason: null },
    { content: 'Hello', finish_reason: null },
    { content: '!', finish_reason: null },
    { finish_reason: 'stop' },
  ]);
  const usage = { prompt_tokens: 25, completion_tokens: 15, total_tokens: 40, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } };
  t.same(relayed.usage, usage, 'the gateway counts the latest usage although the caller did not ask for it');
  t.notMatch(relayed.frames, /usage/, 'the caller who did not ask sees no usage');

  const asked = relayEveryWay(t, 'text.sse', true);
  const withUsage = chunksOf(t, asked);
  t.same(withUsage.at(-1), { id: chunks[0]!.id, object: 'chat.completion.chunk', created: withUsage[0]!.created, model: ROUTING_MODEL, choices: [], usage }, 'usage chunk last, before [DONE]');
  const completion = await assembled(withUsage);
  t.equal(completion.choices[0]!.message.content, 'Hello!');
  t.equal(completion.choices[0]!.finish_reason, 'stop');
  t.same(completion.usage, usage);
});

t.test('tool use: the documented stream; the tool call is index 0 although its block is index 1', async (t) => {
  const relayed = relayEveryWay(t, 'tool-use.sse');
  const chunks = chunksOf(t, relayed);
  const all = deltas(chunks);
  t.same(all[0], { role: 'assistant', content: '', finish_reason: null });
  t.equal(all.filter((d) => 'content' in d).map((d) => d.content).join(''), "Okay, let's check the weather for San Francisco, CA:");
  const toolDeltas = all.filter((d) => 'tool_calls' in d);
  t.same(toolDeltas[0], { tool_calls: [{ index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', type: 'function', function: { name: 'get_weather', arguments: '' } }], finish_reason: null });
  const fragments = toolDeltas.slice(1).map((d) => (d.tool_calls as { index: number; function: { arguments: string } }[])[0]!);
  t.ok(fragments.every((f) => f.index === 0));
  t.same(fragments.map((f) => f.function.arguments), ['{"location":', ' "San', ' Francisc', 'o,', ' CA"', ', ', '"unit": "fah', 'renheit"}'], 'fragments as sent, the empty one left out');
  t.same(all.at(-1), { finish_reason: 'tool_calls' });
  const completion = await assembled(chunks);
  t.same(completion.choices[0]!.message.tool_calls, [
    { id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', type: 'function', function: { name: 'get_weather', arguments: '{"location": "San Francisco, CA", "unit": "fahrenheit"}' } },
  ]);
  t.equal(completion.choices[0]!.finish_reason, 'tool_calls');
});

t.test('extended thinking: reasoning_content, then the whole block with its signature when it stops', async (t) => {
  const relayed = relayEveryWay(t, 'thinking.sse', true);
  const chunks = chunksOf(t, relayed);
  const all = deltas(chunks);
  const thinking = 'Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3\n3. 27 * 400 = 10,800\n4. 27 * 50 = 1,350\n5. 27 * 3 = 81\n6. 10,800 + 1,350 + 81 = 12,231';
  t.same(all, [
    { role: 'assistant', content: '', finish_reason: null },
    { reasoning_content: 'Let me solve this step by step:\n\n1. First break down 27 * 453', finish_reason: null },
    { reasoning_content: '\n2. 453 = 400 + 50 + 3', finish_reason: null },
    { reasoning_content: '\n3. 27 * 400 = 10,800', finish_reason: null },
    { reasoning_content: '\n4. 27 * 50 = 1,350', finish_reason: null },
    { reasoning_content: '\n5. 27 * 3 = 81', finish_reason: null },
    { reasoning_content: '\n6. 10,800 + 1,350 + 81 = 12,231', finish_reason: null },
    { thinking_blocks: [{ signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...', type: 'thinking', thinking }], finish_reason: null },
    { content: '27 * 453 = 12,231', finish_reason: null },
    { finish_reason: 'stop' },
  ]);
  t.equal(relayed.usage, undefined, 'the example reports no usage: none is invented, even when asked');
});

t.test('redacted thinking, several tools (one without arguments), cache counts, cumulative usage', async (t) => {
  const relayed = relayEveryWay(t, 'tools-and-redacted.sse', true);
  const chunks = chunksOf(t, relayed);
  const all = deltas(chunks);
  t.same(all[1], { thinking_blocks: [{ type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj' }], finish_reason: null });
  t.match(relayed.frames, /"thinking_blocks":\[\{"type":"redacted_thinking","data":"EmwK/, 'the redacted block is sent as the provider wrote it');
  t.match(relayed.frames, /"arguments":"\\"days\\": 10000000000000000000001}"/, 'argument text is never re-serialised: the big number stays exact');
  t.notMatch(relayed.frames, /srvtoolu|web_search|query|999999/, 'server tool blocks and unknown events send nothing');
  t.equal(all.filter((d) => d.finish_reason).length, 1, 'one finish chunk');
  const usage = { prompt_tokens: 4240, completion_tokens: 75, total_tokens: 4315, prompt_tokens_details: { cached_tokens: 3000, cache_write_tokens: 1200 } };
  t.same(relayed.usage, usage, 'the latest counts, cache reads and writes inside prompt_tokens, never added up across events');
  const completion = await assembled(chunks);
  t.same(completion.choices[0]!.message.tool_calls, [
    { id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"location": "Paris", "days": 10000000000000000000001}' } },
    { id: 'toolu_01B', type: 'function', function: { name: 'get_time', arguments: '{}' } },
  ]);
  t.equal(completion.choices[0]!.finish_reason, 'tool_calls');
  t.same(completion.usage, usage);
});

t.test('an error event ends the stream with the gateway error event and no [DONE]', async (t) => {
  const relayed = relayEveryWay(t, 'error.sse', true);
  t.equal(relayed.end, 'error');
  const all = events(relayed.frames);
  t.notOk(all.includes('[DONE]'));
  t.same((all.at(-2) as { choices: { delta: unknown }[] }).choices[0]!.delta, { content: 'Partial' });
  t.same(all.at(-1), {
    error: {
      message: 'Overloaded',
      type: 'overloaded_error',
      code: 'provider_stream_error',
      param: null,
      origin: 'gateway',
      gateway_code: 'provider_stream_error',
      provider: 'anthropic',
      provider_status: null,
      provider_code: 'overloaded_error',
    },
  });
  t.same(relayed.usage, { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } }, 'the tokens used so far are still counted');
});
