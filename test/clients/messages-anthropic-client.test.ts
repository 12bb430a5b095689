import Anthropic from '@anthropic-ai/sdk';
import t from 'tap';
import { PROVIDER_KEY } from '../helpers/gateway.js';
import { chatStream, claudeMessage, claudeStream, completion, startInboundRig, type InboundRig } from '../helpers/inbound-rig.js';

// POST /v1/messages and /v1/messages/count_tokens with the official @anthropic-ai/sdk, unmodified, over both dialects.

const clientOf = (rig: InboundRig, extra: ConstructorParameters<typeof Anthropic>[0] = {}) => new Anthropic({ baseURL: rig.gateway.origin, apiKey: 'sk-caller', maxRetries: 0, ...extra });

t.test('messages.create to an anthropic route goes natively: the caller\'s bytes with only model changed, the answer with only model changed', async (t) => {
  const rig = await startInboundRig(t);
  const answer = claudeMessage([{ type: 'text', text: 'Native.' }]);
  rig.claudeAnswer = () => ({ json: answer });
  const message = await clientOf(rig, { defaultHeaders: { 'anthropic-beta': 'prompt-caching-2024-07-31', 'x-private': 'nope' } }).messages.create({
    model: 'claude/sonnet',
    max_tokens: 100,
    system: [{ type: 'text', text: 'Cached system.', cache_control: { type: 'ephemeral' } }],
    messages: [{ role: 'user', content: 'Hi' }],
  });
  t.equal(message.model, 'claude/sonnet');
  t.strictSame(message.content, [{ type: 'text', text: 'Native.' }]);
  t.match(message.usage, { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 2 });
  const sent = rig.claude.requests[0]!;
  t.equal(sent.url, '/v1/messages');
  t.equal(sent.headers['x-api-key'], PROVIDER_KEY, 'the provider key, never the caller\'s');
  t.equal(sent.headers['anthropic-beta'], 'prompt-caching-2024-07-31', 'anthropic-beta forwarded from the allow-list');
  t.match(sent.headers['anthropic-version'], /^\d{4}-\d\d-\d\d$/, "the client's own anthropic-version forwarded");
  t.equal(sent.headers['x-private'], undefined, 'other caller headers stay behind');
  t.equal(sent.headers['authorization'], undefined);
  t.match(sent.body, /"cache_control":\{"type":"ephemeral"\}/, 'cache_control as sent');
  t.equal(JSON.parse(sent.body).model, 'claude-sonnet-4-5');
});

t.test('messages.create to an openai route is translated through chat and back to a Messages answer', async (t) => {
  const rig = await startInboundRig(t);
  rig.oaiAnswer = () => ({ json: completion({ content: 'Translated.' }, 'length') });
  const message = await clientOf(rig).messages.create({ model: 'oai/gpt', max_tokens: 100, system: 'Be kind.', stop_sequences: ['END'], messages: [{ role: 'user', content: 'Hi' }] });
  t.equal(message.type, 'message');
  t.equal(message.model, 'oai/gpt');
  t.strictSame(message.content, [{ type: 'text', text: 'Translated.' }]);
  t.equal(message.stop_reason, 'max_tokens');
  t.match(message.usage, { input_tokens: 8, output_tokens: 5, cache_read_input_tokens: 4 });
  const sent = JSON.parse(rig.oai.requests[0]!.body) as Record<string, unknown>;
  t.strictSame(sent['messages'], [{ role: 'system', content: 'Be kind.' }, { role: 'user', content: 'Hi' }]);
  t.equal(sent['max_completion_tokens'], 100);
  t.strictSame(sent['stop'], ['END']);
});

for (const [label, model] of [['anthropic (native)', 'claude/sonnet'], ['openai (translated)', 'oai/gpt']] as const) {
  t.test(`messages.stream over ${label}: message_start … message_stop with ping, the text and the final message`, async (t) => {
    const rig = await startInboundRig(t);
    rig.claudeAnswer = () => ({ sse: claudeStream([{ start: { type: 'text', text: '' }, deltas: [{ type: 'text_delta', text: 'Hel' }, { type: 'text_delta', text: 'lo' }] }]) });
    rig.oaiAnswer = () => ({ sse: chatStream([{ content: 'Hel' }, { content: 'lo' }]) });
    const stream = clientOf(rig).messages.stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    const types: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    const final = await stream.finalMessage();
    t.equal(final.model, model);
    t.strictSame(final.content, [{ type: 'text', text: 'Hello', ...(model === 'claude/sonnet' ? {} : {}) }].map((block) => ({ ...block, ...(final.content[0] && 'citations' in final.content[0] ? { citations: final.content[0].citations } : {}) })));
    t.equal(final.stop_reason, 'end_turn');
    t.strictSame(types, ['message_start', 'ping', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'].filter((type) => type !== 'ping'));
    t.equal(final.usage.output_tokens, 5);
  });

  t.test(`tools over ${label}: tool_use out, tool_result back`, async (t) => {
    const rig = await startInboundRig(t);
    rig.claudeAnswer = (_r, body) =>
      JSON.stringify(body['messages']).includes('tool_result')
        ? { json: claudeMessage([{ type: 'text', text: 'Sunny.' }]) }
        : { json: claudeMessage([{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo' } }], 'tool_use') };
    rig.oaiAnswer = (_r, body) =>
      JSON.stringify(body['messages']).includes('"role":"tool"')
        ? { json: completion({ content: 'Sunny.' }) }
        : { json: completion({ content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] }, 'tool_calls') };
    const client = clientOf(rig);
    const tools = [{ name: 'weather', description: 'Weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }];
    const first = await client.messages.create({ model, max_tokens: 100, tools, messages: [{ role: 'user', content: 'Weather?' }] });
    t.equal(first.stop_reason, 'tool_use');
    t.match(first.content, [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo' } }]);
    const second = await client.messages.create({
      model,
      max_tokens: 100,
      tools,
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
      ],
    });
    t.match(second.content, [{ type: 'text', text: 'Sunny.' }]);
    if (model === 'oai/gpt') {
      const sent = JSON.parse(rig.oai.requests[1]!.body) as { messages: unknown[]; tools: unknown[] };
      t.match(sent.messages, [{ role: 'user' }, { role: 'assistant', tool_calls: [{ id: 'toolu_1', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] }, { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' }]);
      t.match(sent.tools, [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }]);
    }
  });

  t.test(`a streamed tool call over ${label}: input_json_delta reassembles the input`, async (t) => {
    const rig = await startInboundRig(t);
    rig.claudeAnswer = () => ({ sse: claudeStream([{ start: { type: 'tool_use', id: 'toolu_2', name: 'weather', input: {} }, deltas: [{ type: 'input_json_delta', partial_json: '{"city":' }, { type: 'input_json_delta', partial_json: '"Oslo"}' }] }], 'tool_use') });
    rig.oaiAnswer = () => ({ sse: chatStream([{ tool_calls: [{ index: 0, id: 'toolu_2', type: 'function', function: { name: 'weather', arguments: '{"city":' } }] }, { tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }], 'tool_calls') });
    const final = await clientOf(rig).messages.stream({ model, max_tokens: 100, tools: [{ name: 'weather', input_schema: { type: 'object' } }], messages: [{ role: 'user', content: 'Weather?' }] }).finalMessage();
    t.match(final.content, [{ type: 'tool_use', id: 'toolu_2', name: 'weather', input: { city: 'Oslo' } }]);
    t.equal(final.stop_reason, 'tool_use');
  });
}

t.test('thinking with signatures: natively the signed blocks come back and are replayed byte for byte', async (t) => {
  const rig = await startInboundRig(t);
  const thinking = { type: 'thinking', thinking: 'Hmm.', signature: 'EqQBCkYIARgCKkD+sig==' };
  rig.claudeAnswer = () => ({
    sse: claudeStream([
      { start: { type: 'thinking', thinking: '', signature: '' }, deltas: [{ type: 'thinking_delta', thinking: 'Hmm.' }, { type: 'signature_delta', signature: thinking.signature }] },
      { start: { type: 'text', text: '' }, deltas: [{ type: 'text_delta', text: '42' }] },
    ]),
  });
  const client = clientOf(rig);
  const first = await client.messages.stream({ model: 'claude/sonnet', max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [{ role: 'user', content: 'Q' }] }).finalMessage();
  t.match(first.content[0], thinking);
  rig.claudeAnswer = () => ({ json: claudeMessage([{ type: 'text', text: 'ok' }]) });
  await client.messages.create({ model: 'claude/sonnet', max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [{ role: 'user', content: 'Q' }, { role: 'assistant', content: first.content }, { role: 'user', content: 'More' }] });
  const sent = rig.claude.requests[1]!.body;
  t.ok(sent.includes(JSON.stringify(thinking.signature)), 'the signature reaches Anthropic as the caller sent it');
  t.match(JSON.parse(sent), { thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [{}, { content: [thinking, { type: 'text', text: '42' }] }] });
});

t.test('thinking over an openai route: reasoning_content becomes a thinking block; replayed thinking is dropped (no signature to carry)', async (t) => {
  const rig = await startInboundRig(t);
  rig.oaiAnswer = () => ({ json: completion({ content: '42', reasoning_content: 'Thought.' }) });
  const client = clientOf(rig);
  const first = await client.messages.create({ model: 'oai/gpt', max_tokens: 20000, thinking: { type: 'enabled', budget_tokens: 10000 }, messages: [{ role: 'user', content: 'Q' }] });
  t.match(first.content, [{ type: 'thinking', thinking: 'Thought.', signature: '' }, { type: 'text', text: '42' }]);
  t.equal(JSON.parse(rig.oai.requests[0]!.body).reasoning_effort, 'medium');
  await client.messages.create({ model: 'oai/gpt', max_tokens: 100, messages: [{ role: 'user', content: 'Q' }, { role: 'assistant', content: first.content }, { role: 'user', content: 'More' }] });
  t.match(JSON.parse(rig.oai.requests[1]!.body).messages, [{ role: 'user' }, { role: 'assistant', content: '42' }, { role: 'user' }]);
});

t.test('countTokens: forwarded natively on anthropic routes (with ?beta=true as Claude Code sends it)', async (t) => {
  const rig = await startInboundRig(t);
  rig.claudeAnswer = () => ({ json: { input_tokens: 1234 } });
  const count = await clientOf(rig).messages.countTokens({ model: 'claude/sonnet', messages: [{ role: 'user', content: 'Count me' }] });
  t.equal(count.input_tokens, 1234);
  t.equal(rig.claude.requests[0]!.url, '/v1/messages/count_tokens');
  t.equal(JSON.parse(rig.claude.requests[0]!.body).model, 'claude-sonnet-4-5');
  const beta = await fetch(`${rig.gateway.origin}/v1/messages/count_tokens?beta=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'claude/sonnet', messages: [{ role: 'user', content: 'x' }] }) });
  t.equal(beta.status, 200);
});

t.test('countTokens on an openai route: 404 not_found_error in Anthropic\'s shape, nothing sent', async (t) => {
  const rig = await startInboundRig(t);
  const error = await clientOf(rig).messages.countTokens({ model: 'oai/gpt', messages: [{ role: 'user', content: 'Count me' }] }).catch((e: unknown) => e);
  t.ok(error instanceof Anthropic.NotFoundError);
  t.match((error as InstanceType<typeof Anthropic.NotFoundError>).error, { type: 'error', error: { type: 'not_found_error', message: /count_tokens/, gateway_code: 'not_found' } });
  t.equal(rig.oai.requests.length, 0);
});

t.test('native stream: an overload right after message_start fails over (nothing was sent yet), or answers 529 overloaded_error without a fallback', async (t) => {
  const rig = await startInboundRig(t);
  const overloaded = claudeStream([]).split('event: ping')[0]! + 'event: ping\ndata: {"type":"ping"}\n\nevent: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
  rig.claudeAnswer = () => ({ sse: overloaded });
  rig.oaiAnswer = () => ({ sse: chatStream([{ content: 'from the ' }, { content: 'fallback' }]) });
  const final = await clientOf(rig).messages.stream({ model: 'claude/to-oai', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage();
  t.strictSame(final.content.map((block) => (block.type === 'text' ? block.text : block.type)), ['from the fallback'], 'the fallback answered the whole stream');
  t.equal(final.model, 'claude/to-oai');
  t.equal(rig.claude.requests.length, 1);
  t.equal(rig.oai.requests.length, 1, 'failed over once');

  const error = await clientOf(rig).messages.create({ model: 'claude/sonnet', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hi' }] }).then(
    async (stream) => {
      for await (const _event of stream) {
        // reading to the end: an HTTP error never gets here
      }
      return undefined;
    },
    (caught: unknown) => caught,
  );
  t.ok(error instanceof Anthropic.APIError, 'an HTTP error, not a stream that began and broke');
  t.equal((error as InstanceType<typeof Anthropic.APIError>).status, 529);
  t.match((error as InstanceType<typeof Anthropic.APIError>).error, { type: 'error', error: { type: 'overloaded_error', message: /Overloaded/ } });
});
