import OpenAI, { APIError } from 'openai';
import t, { type Test } from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { ANTHROPIC_ROUTES } from '../helpers/mock-anthropic.js';
import { startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.js';
import { fixture } from '../helpers/anthropic-fixtures.js';
import { bytePieces, startEventStream, writeInPieces } from '../helpers/sse-upstream.js';

// Recorded streams from Anthropic's docs through an anthropic-dialect route: the engine, the relay and the
// official client are all real.
const MODEL = 'claude/plain';

async function gateway(t: Test, answer: (res: Parameters<Parameters<typeof startMockUpstream>[0]>[1]) => void | Promise<void>) {
  const upstream: MockUpstream = await startMockUpstream((_req, res) => answer(res));
  const running = await startGateway({ routes: ANTHROPIC_ROUTES, upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([running.close(), upstream.close()]));
  return { running, client: new OpenAI({ baseURL: `${running.origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 }) };
}

const streamed = (name: string) => async (res: Parameters<Parameters<typeof startMockUpstream>[0]>[1]) => {
  startEventStream(res);
  await writeInPieces(res, bytePieces(fixture(name).toString(), 7), 0);
  res.end();
};

t.test('a streamed tool call through the gateway, with usage asked for, in 7-byte reads', async (t) => {
  const { client, running } = await gateway(t, streamed('tools-and-redacted.sse'));
  const stream = client.chat.completions.stream(
    { model: MODEL, messages: [{ role: 'user', content: 'weather?' }], stream: true, stream_options: { include_usage: true } },
    { headers: { 'x-request-id': 'anthropic-tools' } },
  );
  for await (const chunk of stream) t.equal(chunk.model, MODEL);
  const completion = await stream.finalChatCompletion();
  t.equal(completion.id, 'msg_01Tools');
  t.same(completion.choices[0]!.message.tool_calls!.map((call) => [call.id, call.type === 'function' ? call.function.arguments : '']), [
    ['toolu_01A', '{"location": "Paris", "days": 10000000000000000000001}'],
    ['toolu_01B', '{}'],
  ]);
  t.equal(completion.choices[0]!.finish_reason, 'tool_calls');
  t.same(completion.usage, { prompt_tokens: 4240, completion_tokens: 75, total_tokens: 4315, prompt_tokens_details: { cached_tokens: 3000, cache_write_tokens: 1200 } });
  t.match(await running.requestLog('anthropic-tools'), { prompt_tokens: 4240, completion_tokens: 75, cached_tokens: 3000, gateway_code: null });
});

t.test('usage not asked for: none in the stream, still counted by the gateway', async (t) => {
  const { client, running } = await gateway(t, streamed('text.sse'));
  const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true }, { headers: { 'x-request-id': 'anthropic-text' } });
  let text = '';
  for await (const chunk of stream) {
    t.notOk(chunk.usage, 'no usage in any chunk');
    text += chunk.choices[0]?.delta.content ?? '';
  }
  t.equal(text, 'Hello!');
  t.match(await running.requestLog('anthropic-text'), { prompt_tokens: 25, completion_tokens: 15 });
});

t.test('an error event reaches the client as an error, never as a finish_reason', async (t) => {
  const { client, running } = await gateway(t, streamed('error.sse'));
  const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true }, { headers: { 'x-request-id': 'anthropic-error' } });
  let text = '';
  const error = await (async () => {
    try {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    } catch (caught) {
      return caught;
    }
    return undefined;
  })();
  t.equal(text, 'Partial');
  t.type(error, APIError);
  t.match((error as APIError).error, { gateway_code: 'provider_stream_error', provider_code: 'overloaded_error', message: 'Overloaded', provider: 'claude' });
  t.match(await running.requestLog('anthropic-error'), { gateway_code: 'provider_stream_error', prompt_tokens: 12 });
});

t.test('a non-streamed answer and an Anthropic error body', async (t) => {
  const { client } = await gateway(t, (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"id":"msg_01X","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"Hmm.","signature":"c2ln"},{"type":"text","text":"Hi"},{"type":"text","text":" there"}],"stop_reason":"max_tokens","usage":{"input_tokens":3,"cache_read_input_tokens":4,"output_tokens":5}}');
  });
  const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
  t.match(completion, { id: 'msg_01X', object: 'chat.completion', model: MODEL, choices: [{ message: { content: 'Hi there', reasoning_content: 'Hmm.', thinking_blocks: [{ type: 'thinking', thinking: 'Hmm.', signature: 'c2ln' }] }, finish_reason: 'length' }] });
  t.same(completion.usage, { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12, prompt_tokens_details: { cached_tokens: 4, cache_write_tokens: 0 } });

  const failing = await gateway(t, (res) => {
    res.writeHead(529, { 'content-type': 'application/json' });
    res.end('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}');
  });
  const error = await failing.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }).catch((caught: unknown) => caught);
  t.type(error, APIError);
  t.match((error as APIError).error, { provider_status: 529, provider_code: 'overloaded_error', message: 'Overloaded' });
});
