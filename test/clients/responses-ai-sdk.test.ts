import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateText, stepCountIs, streamText, tool } from 'ai';
import t from 'tap';
import { z } from 'zod';
import { chatStream, claudeMessage, claudeStream, completion, startInboundRig, type InboundRig } from '../helpers/inbound-rig.js';

// The Vercel AI SDK's default OpenAI provider (`openai(model)` calls /v1/responses), unmodified, over both dialects.

const providerOf = (rig: InboundRig) => createOpenAI({ baseURL: `${rig.gateway.origin}/v1`, apiKey: 'sk-caller' });

/** Answers the weather tool call first, then the text once the tool's result is in the conversation. */
function toolLoop(rig: InboundRig): void {
  const answered = (messages: unknown) => JSON.stringify(messages).includes('sunny');
  rig.oaiAnswer = (_r, body) =>
    answered(body['messages'])
      ? { json: completion({ content: 'Sunny in Oslo.' }) }
      : { json: completion({ content: null, tool_calls: [{ id: 'call_w', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] }, 'tool_calls') };
  rig.claudeAnswer = (_r, body) =>
    answered(body['messages'])
      ? { json: claudeMessage([{ type: 'text', text: 'Sunny in Oslo.' }]) }
      : { json: claudeMessage([{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'call_w', name: 'weather', input: { city: 'Oslo' } }], 'tool_use') };
}

const weather = tool({ description: 'Weather in a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `sunny in ${city}` });

for (const [label, model] of [['openai', 'oai/gpt'], ['anthropic', 'claude/sonnet']] as const) {
  t.test(`generateText over ${label}`, async (t) => {
    const rig = await startInboundRig(t);
    rig.oaiAnswer = () => ({ json: completion({ content: 'Hello, AI SDK.' }) });
    rig.claudeAnswer = () => ({ json: claudeMessage([{ type: 'text', text: 'Hello, AI SDK.' }]) });
    const result = await generateText({ model: providerOf(rig)(model), prompt: 'Hello', maxRetries: 0 });
    t.equal(result.text, 'Hello, AI SDK.');
    t.equal(result.finishReason, 'stop');
    t.ok((result.usage.inputTokens ?? 0) > 0);
    t.equal(rig.gateway.requestLogs()[0]?.['status'], 200);
  });

  t.test(`streamText over ${label}`, async (t) => {
    const rig = await startInboundRig(t);
    rig.oaiAnswer = () => ({ sse: chatStream([{ content: 'Str' }, { content: 'eamed.' }]) });
    rig.claudeAnswer = () => ({ sse: claudeStream([{ start: { type: 'text', text: '' }, deltas: [{ type: 'text_delta', text: 'Str' }, { type: 'text_delta', text: 'eamed.' }] }]) });
    const result = streamText({ model: providerOf(rig)(model), prompt: 'Hello', maxRetries: 0 });
    let text = '';
    for await (const part of result.textStream) text += part;
    t.equal(text, 'Streamed.');
    t.equal(await result.finishReason, 'stop');
  });

  t.test(`tools over ${label}: a multi-step loop works with providerOptions.openai.store = false`, async (t) => {
    const rig = await startInboundRig(t);
    toolLoop(rig);
    const result = await generateText({
      model: providerOf(rig)(model),
      prompt: 'Weather in Oslo?',
      tools: { weather },
      stopWhen: stepCountIs(3),
      providerOptions: { openai: { store: false } },
      maxRetries: 0,
    });
    t.equal(result.text, 'Sunny in Oslo.');
    t.equal(result.steps.length, 2);
    t.match(result.steps[0]?.toolCalls, [{ toolName: 'weather', input: { city: 'Oslo' } }]);
  });

  t.test(`tools over ${label}: a streamed multi-step loop`, async (t) => {
    const rig = await startInboundRig(t);
    const answered = (messages: unknown) => JSON.stringify(messages).includes('sunny');
    rig.oaiAnswer = (_r, body) =>
      answered(body['messages'])
        ? { sse: chatStream([{ content: 'Sunny.' }]) }
        : { sse: chatStream([{ tool_calls: [{ index: 0, id: 'call_s', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] }], 'tool_calls') };
    rig.claudeAnswer = (_r, body) =>
      answered(body['messages'])
        ? { sse: claudeStream([{ start: { type: 'text', text: '' }, deltas: [{ type: 'text_delta', text: 'Sunny.' }] }]) }
        : { sse: claudeStream([{ start: { type: 'tool_use', id: 'call_s', name: 'weather', input: {} }, deltas: [{ type: 'input_json_delta', partial_json: '{"city":"Oslo"}' }] }], 'tool_use') };
    const result = streamText({ model: providerOf(rig)(model), prompt: 'Weather?', tools: { weather }, stopWhen: stepCountIs(3), providerOptions: { openai: { store: false } }, maxRetries: 0 });
    let text = '';
    for await (const part of result.textStream) text += part;
    t.equal(text, 'Sunny.');
    t.equal((await result.steps).length, 2);
  });
}

t.test('tools under the AI SDK default (store: true): the item_reference is refused with a 400 saying to set store = false', async (t) => {
  const rig = await startInboundRig(t);
  toolLoop(rig);
  const failure = await generateText({ model: providerOf(rig)('claude/sonnet'), prompt: 'Weather in Oslo?', tools: { weather }, stopWhen: stepCountIs(3), maxRetries: 0 }).catch((error: unknown) => error);
  t.ok(APICallError.isInstance(failure), 'the second step fails');
  const error = failure as APICallError;
  t.equal(error.statusCode, 400);
  t.match(error.responseBody, /item_reference/);
  t.match(error.responseBody, /providerOptions\.openai\.store = false/);
  t.match(JSON.parse(error.responseBody ?? '{}'), { error: { param: /^input\[\d+\]$/, gateway_code: 'unsupported_parameter' } });
  t.equal(rig.claude.requests.length, 1, 'nothing was sent for the refused step');
});
