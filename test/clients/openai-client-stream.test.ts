import OpenAI, { APIError } from 'openai';
import t, { type Test } from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { startMockUpstream } from '../helpers/mock-upstream.js';
import { bytePieces, chunk, sseBody, startEventStream, writeInPieces } from '../helpers/sse-upstream.js';

const UPSTREAM_MODEL = 'gpt-4o-2024-11-20';

async function gatewayStreaming(t: Test, body: (requestBody: Record<string, unknown>) => string, pieceBytes = 0) {
  const upstream = await startMockUpstream(async (req, res) => {
    startEventStream(res);
    const text = body(JSON.parse(req.body) as Record<string, unknown>);
    if (pieceBytes > 0) await writeInPieces(res, bytePieces(text, pieceBytes), 1);
    else res.write(text);
    res.end();
  });
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  return { client: new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 }), upstream };
}

t.test('for await over the stream: every chunk has the routing string, the text reassembles exactly', async (t) => {
  const pieces = ['Grüße ', '👩‍💻', ' 你好世界', ' — ', 'done.'];
  const { client } = await gatewayStreaming(t, () => sseBody(pieces.map((content) => chunk(UPSTREAM_MODEL, { content }))), 5);
  const stream = await client.chat.completions.create({ model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true });
  let text = '';
  let count = 0;
  for await (const part of stream) {
    t.equal(part.model, 'mock/gpt-4o');
    text += part.choices[0]?.delta.content ?? '';
    count++;
  }
  t.equal(count, pieces.length);
  t.equal(text, pieces.join(''));
});

t.test('tool-call deltas, including a 2 MB argument, reassemble into the same arguments', async (t) => {
  const big = JSON.stringify({ file: 'x'.repeat(2 * 1024 * 1024), note: 'end ✓' });
  const parts = [big.slice(0, 10), big.slice(10, big.length - 5), big.slice(big.length - 5)];
  const events = [
    chunk(UPSTREAM_MODEL, { role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'write_file', arguments: '' } }] }),
    ...parts.map((args) => chunk(UPSTREAM_MODEL, { tool_calls: [{ index: 0, function: { arguments: args } }] })),
  ];
  const { client } = await gatewayStreaming(t, () => sseBody(events), 64 * 1024);
  const stream = await client.chat.completions.create({ model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'write it' }], stream: true });
  let args = '';
  let name = '';
  for await (const part of stream) {
    const call = part.choices[0]?.delta.tool_calls?.[0];
    name += call?.function?.name ?? '';
    args += call?.function?.arguments ?? '';
  }
  t.equal(name, 'write_file');
  t.equal(args, big);
});

t.test('a usage chunk arrives when the caller asks for it', async (t) => {
  const usage = { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } };
  const { client, upstream } = await gatewayStreaming(t, (request) => {
    const events: unknown[] = [chunk(UPSTREAM_MODEL, { content: 'hi' })];
    if ((request['stream_options'] as { include_usage?: boolean } | undefined)?.include_usage) events.push({ ...chunk(UPSTREAM_MODEL, {}), choices: [], usage });
    return sseBody(events);
  });
  const stream = await client.chat.completions.create({
    model: 'mock/gpt-4o',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const parts = [];
  for await (const part of stream) parts.push(part);
  t.same(parts.at(-1)?.usage, usage);
  t.equal(parts.at(-1)?.model, 'mock/gpt-4o');
  t.match(JSON.parse(upstream.requests[0]!.body), { stream_options: { include_usage: true } });
});

t.test('a mid-stream fault is thrown by the client, not a silent end', async (t) => {
  const { client } = await gatewayStreaming(t, () => sseBody([chunk(UPSTREAM_MODEL, { content: 'partial' })], { done: false }));
  const stream = await client.chat.completions.create({ model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true });
  const seen: string[] = [];
  const error = await (async () => {
    for await (const part of stream) seen.push(part.choices[0]?.delta.content ?? '');
  })().catch((e: unknown) => e);
  t.same(seen, ['partial']);
  t.type(error, APIError);
  t.match((error as APIError).error, { gateway_code: 'upstream_stream_interrupted', provider: 'mock' });
});

t.test('a provider error event mid-stream is thrown by the client with the provider code', async (t) => {
  const { client } = await gatewayStreaming(t, () =>
    sseBody([chunk(UPSTREAM_MODEL, { content: 'partial' }), { error: { code: 502, message: 'Upstream provider failed' }, choices: [{ index: 0, delta: {}, finish_reason: 'error' }] }]),
  );
  const stream = await client.chat.completions.create({ model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true });
  const error = await (async () => {
    for await (const _ of stream) void _;
  })().catch((e: unknown) => e);
  t.type(error, APIError);
  t.match((error as APIError).error, { gateway_code: 'provider_stream_error', provider_code: '502', message: 'Upstream provider failed' });
});
