import OpenAI from 'openai';
import t from 'tap';
import { chatStream, claudeMessage, claudeStream, completion, startInboundRig } from '../helpers/inbound-rig.js';

// POST /v1/responses with the official openai client, unmodified, over both dialects (README: POST /v1/responses).

const clientOf = (origin: string) => new OpenAI({ baseURL: `${origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 });

t.test('responses.create, plain: an openai-dialect route answers a response object translated from chat', async (t) => {
  const rig = await startInboundRig(t);
  rig.oaiAnswer = () => ({ json: completion({ content: 'Hello from chat' }) });
  const response = await clientOf(rig.gateway.origin).responses.create({ model: 'oai/gpt', input: 'Say hello', instructions: 'Be brief.', max_output_tokens: 50 });
  t.equal(response.object, 'response');
  t.equal(response.status, 'completed');
  t.equal(response.model, 'oai/gpt');
  t.equal(response.output_text, 'Hello from chat');
  t.equal((response as unknown as { store: boolean }).store, false);
  t.match(response.usage, { input_tokens: 12, output_tokens: 5, total_tokens: 17, input_tokens_details: { cached_tokens: 4 }, output_tokens_details: { reasoning_tokens: 0 } });
  const sent = JSON.parse(rig.oai.requests[0]!.body) as Record<string, unknown>;
  t.strictSame(sent['messages'], [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }]);
  t.equal(sent['model'], 'gpt-4.1');
  t.equal(sent['max_completion_tokens'], 50);
});

t.test('responses.create, plain: an anthropic-dialect route answers through the same chat form', async (t) => {
  const rig = await startInboundRig(t);
  rig.claudeAnswer = () => ({ json: claudeMessage([{ type: 'text', text: 'Hi from Claude' }], 'max_tokens') });
  const response = await clientOf(rig.gateway.origin).responses.create({ model: 'claude/sonnet', input: [{ role: 'developer', content: 'Terse.' }, { role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }] });
  t.equal(response.status, 'incomplete');
  t.same(response.incomplete_details, { reason: 'max_output_tokens' });
  t.equal(response.output_text, 'Hi from Claude');
  t.equal(response.model, 'claude/sonnet');
  const sent = JSON.parse(rig.claude.requests[0]!.body) as Record<string, unknown>;
  t.match(sent['system'], [{ type: 'text', text: 'Terse.' }]);
  t.equal(rig.claude.requests[0]!.url, '/v1/messages');
});

for (const [label, model] of [['openai', 'oai/gpt'], ['anthropic', 'claude/sonnet']] as const) {
  t.test(`streamed over the ${label} dialect: the event sequence the issue names, sequence numbers strictly increasing, no [DONE]`, async (t) => {
    const rig = await startInboundRig(t);
    rig.oaiAnswer = () => ({ sse: chatStream([{ content: 'Hel' }, { content: 'lo' }]) });
    rig.claudeAnswer = () => ({ sse: claudeStream([{ start: { type: 'text', text: '' }, deltas: [{ type: 'text_delta', text: 'Hel' }, { type: 'text_delta', text: 'lo' }] }]) });
    const stream = await clientOf(rig.gateway.origin).responses.create({ model, input: 'hi', stream: true });
    const types: string[] = [];
    let last = -1;
    let text = '';
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      t.ok(event.sequence_number > last, `${event.type} has a larger sequence_number`);
      last = event.sequence_number;
      if (event.type === 'response.output_text.delta') {
        text += event.delta;
        t.type(event.item_id, 'string');
        t.equal(event.output_index, 0);
        t.equal(event.content_index, 0);
      }
      if (event.type === 'response.completed') final = event.response;
    }
    t.strictSame(types, [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    t.equal(text, 'Hello');
    t.equal(final?.output_text ?? (final?.output[0] as { content: { text: string }[] }).content[0]!.text, 'Hello');
    t.equal(final?.model, model);
    t.ok(final?.usage && final.usage.total_tokens > 0, 'usage in the terminal event');
  });

  t.test(`the openai client's stream helper over ${label}: finalResponse holds the text`, async (t) => {
    const rig = await startInboundRig(t);
    rig.oaiAnswer = () => ({ sse: chatStream([{ content: 'Two' }, { content: ' parts' }]) });
    rig.claudeAnswer = () => ({ sse: claudeStream([{ start: { type: 'text', text: '' }, deltas: [{ type: 'text_delta', text: 'Two' }, { type: 'text_delta', text: ' parts' }] }]) });
    const stream = clientOf(rig.gateway.origin).responses.stream({ model, input: 'hi' });
    const response = await stream.finalResponse();
    t.equal(response.output_text, 'Two parts');
    t.equal(response.status, 'completed');
  });

  t.test(`a tool round trip over ${label}: function_call out, function_call_output back as the tool message`, async (t) => {
    const rig = await startInboundRig(t);
    rig.oaiAnswer = (_r, body) =>
      (body['messages'] as unknown[]).length > 1
        ? { json: completion({ content: 'It is sunny.' }) }
        : { json: completion({ content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] }, 'tool_calls') };
    rig.claudeAnswer = (_r, body) =>
      (body['messages'] as unknown[]).length > 1
        ? { json: claudeMessage([{ type: 'text', text: 'It is sunny.' }]) }
        : { json: claudeMessage([{ type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Oslo' } }], 'tool_use') };
    const client = clientOf(rig.gateway.origin);
    const tools = [{ type: 'function' as const, name: 'weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: true }];
    const first = await client.responses.create({ model, input: 'Weather in Oslo?', tools });
    const call = first.output.find((item) => item.type === 'function_call');
    t.match(call, { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}' });
    const second = await client.responses.create({
      model,
      tools,
      input: [{ role: 'user', content: 'Weather in Oslo?' }, ...first.output.filter((item) => item.type === 'function_call'), { type: 'function_call_output', call_id: 'call_1', output: 'sunny' }],
    });
    t.equal(second.output_text, 'It is sunny.');
    const upstream = model === 'oai/gpt' ? rig.oai : rig.claude;
    const sent = JSON.parse(upstream.requests[1]!.body) as { messages: Record<string, unknown>[] };
    if (model === 'oai/gpt') {
      t.match(sent.messages[1], { role: 'assistant', tool_calls: [{ id: 'call_1', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] });
      t.match(sent.messages[2], { role: 'tool', tool_call_id: 'call_1', content: 'sunny' });
      t.match((JSON.parse(upstream.requests[0]!.body) as { tools: unknown[] }).tools, [{ type: 'function', function: { name: 'weather', strict: true } }]);
    } else {
      t.match(sent.messages[1], { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'weather' }] });
      t.match(sent.messages[2], { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1' }] });
    }
  });

  t.test(`a streamed tool call over ${label}: added, argument deltas, done, then response.completed with the item`, async (t) => {
    const rig = await startInboundRig(t);
    rig.oaiAnswer = () => ({
      sse: chatStream([{ tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'weather', arguments: '' } }] }, { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, { tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }], 'tool_calls'),
    });
    rig.claudeAnswer = () => ({
      sse: claudeStream([{ start: { type: 'tool_use', id: 'call_9', name: 'weather', input: {} }, deltas: [{ type: 'input_json_delta', partial_json: '{"city":' }, { type: 'input_json_delta', partial_json: '"Oslo"}' }] }], 'tool_use'),
    });
    const stream = await clientOf(rig.gateway.origin).responses.create({ model, input: 'Weather?', stream: true, tools: [{ type: 'function', name: 'weather', parameters: {}, strict: false }] });
    const types: string[] = [];
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.completed') final = event.response;
    }
    t.strictSame(types.slice(2), ['response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done', 'response.completed']);
    t.match(final?.output, [{ type: 'function_call', call_id: 'call_9', name: 'weather', arguments: '{"city":"Oslo"}', status: 'completed' }]);
  });

  t.test(`structured output over ${label}: text.format json_schema reaches the provider as its schema`, async (t) => {
    const rig = await startInboundRig(t);
    rig.oaiAnswer = () => ({ json: completion({ content: '{"answer":42}' }) });
    rig.claudeAnswer = () => ({ json: claudeMessage([{ type: 'text', text: '{"answer":42}' }]) });
    const schema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'], additionalProperties: false };
    const response = await clientOf(rig.gateway.origin).responses.create({ model, input: 'Answer?', text: { format: { type: 'json_schema', name: 'answer', schema, strict: true } } });
    t.strictSame(JSON.parse(response.output_text), { answer: 42 });
    const sent = JSON.parse((model === 'oai/gpt' ? rig.oai : rig.claude).requests[0]!.body) as Record<string, unknown>;
    if (model === 'oai/gpt') t.strictSame(sent['response_format'], { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } });
    else t.strictSame((sent['output_config'] as Record<string, unknown>)['format'], { type: 'json_schema', schema });
  });
}

t.test('reasoning from an anthropic route comes back as a reasoning item whose encrypted_content replays the signed block', async (t) => {
  const rig = await startInboundRig(t);
  const thinking = { type: 'thinking', thinking: 'Let me think.', signature: 'sig-abc==' };
  rig.claudeAnswer = () => ({ json: claudeMessage([thinking, { type: 'text', text: 'Done.' }]) });
  const client = clientOf(rig.gateway.origin);
  const first = await client.responses.create({ model: 'claude/sonnet', input: 'Think.', reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'] });
  const reasoning = first.output.find((item) => item.type === 'reasoning');
  t.match(reasoning, { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Let me think.' }] });
  t.type(reasoning?.encrypted_content, 'string');
  t.match(JSON.parse(rig.claude.requests[0]!.body), { thinking: { type: 'enabled' } });
  await client.responses.create({ model: 'claude/sonnet', input: [{ role: 'user', content: 'Think.' }, ...first.output, { role: 'user', content: 'Again.' }] as OpenAI.Responses.ResponseInput });
  const sent = JSON.parse(rig.claude.requests[1]!.body) as { messages: { content: unknown }[] };
  t.match(sent.messages[1]!.content, [thinking, { type: 'text', text: 'Done.' }], 'the signed thinking block goes back as it came');
});
