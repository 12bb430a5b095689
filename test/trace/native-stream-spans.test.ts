// Issue 34, item 15, for the native passthrough streams (/v1/responses to a model marked `api: responses`,
// /v1/messages to an anthropic route): the attempt's CLIENT span has the provider's response id, model and finish
// reasons, and a stream the caller cancels has its attempt logged, counted, charged and described.
import t, { type Test } from 'tap';
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { sendJson, startMockUpstream, type RecordedRequest } from '../helpers/mock-upstream.js';
import { startEventStream } from '../helpers/sse-upstream.js';
import { framed, responseEvents, responseObject, messageOutput } from '../helpers/native-responses-rig.js';
import { SPAN_KIND, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { parseExposition, valueOf } from '../helpers/prometheus.js';
import { cancelAfterFirstEvent as cancelStream, requestLine, tracedToReceiver } from '../helpers/cancelled-stream.js';
import { estimateTokens } from '../../src/observe/usage-estimate.js';

t.setTimeout(120_000);

const ROUTES = `version: 1
providers:
  claude:
    dialect: anthropic
    base_url: http://127.0.0.1:9/v1
    base_url_env: MOCK_BASE_URL
    api_key_env: MOCK_API_KEY
  oai:
    base_url: http://127.0.0.1:9/v1
    base_url_env: MOCK_BASE_URL
    api_key_env: MOCK_API_KEY
models:
  claude/plain: { upstream_model: claude-plain-1, max_output_tokens: 8192 }
  oai/resp: { upstream_model: gpt-5-resp, api: responses }
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

/** The provider's own dated model, as Anthropic answers it: the span's response model, not the routing string. */
const CLAUDE_MODEL = 'claude-plain-1-20261101';
const claudeEvent = (data: Record<string, unknown>) => `event: ${String(data['type'])}\ndata: ${JSON.stringify(data)}\n\n`;
const CLAUDE_OPENING =
  claudeEvent({ type: 'message_start', message: { id: 'msg_native1', type: 'message', role: 'assistant', model: CLAUDE_MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 11, output_tokens: 1 } } }) +
  claudeEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
  claudeEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } });
const claudeClosing = (stopReason: string, outputTokens: number) =>
  claudeEvent({ type: 'content_block_stop', index: 0 }) +
  claudeEvent({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } }) +
  claudeEvent({ type: 'message_stop' });

type Script = (request: RecordedRequest, res: ServerResponse) => void | Promise<void>;

interface Rig {
  readonly gateway: RunningGateway;
  readonly collector: OtlpReceiver;
  script: Script;
}

/** A mock provider speaking both native APIs (by path), a gateway tracing to a real OTLP receiver. */
async function startRig(t: Test): Promise<Rig> {
  const { collector, telemetry } = await tracedToReceiver(t);
  const rig = { script: (_request, res) => sendJson(res, 500, { error: { message: 'no script' } }) } as Rig & { script: Script };
  const upstream = await startMockUpstream((request, res) => rig.script(request, res));
  t.teardown(() => upstream.close());
  const gateway = await startGateway({ routes: ROUTES, upstreamOrigin: upstream.origin, telemetry });
  t.teardown(() => gateway.close());
  return Object.assign(rig, { gateway, collector });
}

/** The CLIENT span of the request the caller sent with `x-request-id: requestId`. */
async function attemptSpan(collector: OtlpReceiver, requestId: string): Promise<ReceivedSpan> {
  const server = await collector.waitFor(() => collector.spans.find((span) => span.kind === SPAN_KIND.server && span.attributes['gateway.request_id'] === requestId), 20_000);
  return collector.waitFor(() => collector.spans.find((span) => span.kind === SPAN_KIND.client && span.parentSpanId === server.spanId), 20_000);
}

/** A provider that sends `first`, waits until the test releases it (after the caller left), then ends with `rest`. */
function pausedScript(first: string, rest: string): { script: Script; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    release: () => release(),
    script: async (_request, res) => {
      startEventStream(res);
      res.write(first);
      await released;
      res.end(rest);
    },
  };
}

async function attemptsCounted(gateway: RunningGateway, line: Record<string, unknown>): Promise<number | undefined> {
  const attempt = (line['attempts'] as { provider: string; endpoint: string; outcome: string }[])[0]!;
  const metrics = parseExposition(await (await fetch(`${gateway.origin}/metrics`)).text());
  return valueOf(metrics, 'gateway_upstream_attempts_total', { provider: attempt.provider, endpoint: attempt.endpoint, outcome: 'caller_disconnected' });
}

t.test('a native Responses stream (openai client): the attempt span has response.created\'s id and model and the terminal event\'s finish reason', async (t) => {
  const rig = await startRig(t);
  const client = new OpenAI({ baseURL: `${rig.gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 });
  rig.script = (_request, res) => {
    startEventStream(res);
    res.end(framed(responseEvents(['Hel', 'lo'])));
  };
  for await (const event of await client.responses.create({ model: 'oai/resp', input: 'hi', stream: true }, { headers: { 'x-request-id': 'resp-done' } })) void event;
  t.match((await attemptSpan(rig.collector, 'resp-done')).attributes, {
    'gen_ai.request.stream': true,
    'gen_ai.response.id': 'resp_up1',
    'gen_ai.response.model': 'gpt-5-resp-2026',
    'gen_ai.response.finish_reasons': ['completed'],
    'gen_ai.usage.output_tokens': 6,
  });

  // Cut by max_output_tokens: the reason the provider gave, streamed or not.
  const cut = { id: 'resp_cut', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  rig.script = (_request, res) => {
    startEventStream(res);
    const events = responseEvents(['Hel'], { end: false }).map((event) => (event['type'] === 'response.created' ? { ...event, response: { ...(event['response'] as object), id: 'resp_cut' } } : event));
    res.end(framed([...events, { type: 'response.incomplete', sequence_number: events.length, response: responseObject([messageOutput('Hel')], cut) }]));
  };
  for await (const event of await client.responses.create({ model: 'oai/resp', input: 'hi', stream: true }, { headers: { 'x-request-id': 'resp-cut' } })) void event;
  t.match((await attemptSpan(rig.collector, 'resp-cut')).attributes, { 'gen_ai.response.id': 'resp_cut', 'gen_ai.response.finish_reasons': ['max_output_tokens'] });
  rig.script = (_request, res) => sendJson(res, 200, responseObject([messageOutput('Hel')], cut));
  await client.responses.create({ model: 'oai/resp', input: 'hi' }, { headers: { 'x-request-id': 'resp-cut-whole' } });
  t.match((await attemptSpan(rig.collector, 'resp-cut-whole')).attributes, { 'gen_ai.response.id': 'resp_cut', 'gen_ai.response.finish_reasons': ['max_output_tokens'] });
});

t.test('a native Messages answer, streamed and not (@anthropic-ai/sdk): the attempt span has the provider\'s id, model and stop reason', async (t) => {
  const rig = await startRig(t);
  const client = new Anthropic({ baseURL: rig.gateway.origin, apiKey: 'sk-caller', maxRetries: 0 });
  rig.script = (_request, res) => {
    startEventStream(res);
    res.end(CLAUDE_OPENING + claudeClosing('end_turn', 7));
  };
  const stream = client.messages.stream({ model: 'claude/plain', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-request-id': 'msg-stream' } });
  const message = await stream.finalMessage();
  t.equal(message.model, 'claude/plain', 'the caller still sees the routing string');
  t.match((await attemptSpan(rig.collector, 'msg-stream')).attributes, {
    'gen_ai.provider.name': 'anthropic',
    'gen_ai.request.stream': true,
    'gen_ai.response.id': 'msg_native1',
    'gen_ai.response.model': CLAUDE_MODEL,
    'gen_ai.response.finish_reasons': ['end_turn'],
    'gen_ai.usage.output_tokens': 7,
  });

  rig.script = (_request, res) =>
    sendJson(res, 200, { id: 'msg_whole1', type: 'message', role: 'assistant', model: CLAUDE_MODEL, content: [{ type: 'text', text: 'Hi' }], stop_reason: 'max_tokens', stop_sequence: null, usage: { input_tokens: 3, output_tokens: 2 } });
  await client.messages.create({ model: 'claude/plain', max_tokens: 2, messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-request-id': 'msg-whole' } });
  t.match((await attemptSpan(rig.collector, 'msg-whole')).attributes, { 'gen_ai.response.id': 'msg_whole1', 'gen_ai.response.model': CLAUDE_MODEL, 'gen_ai.response.finish_reasons': ['max_tokens'] });
});

t.test('a native Responses stream the caller cancels: its attempt logged, counted, charged the usage that came after, and described on its span', async (t) => {
  const rig = await startRig(t);
  const events = responseEvents(['Hello', ' world']);
  const paused = pausedScript(framed(events.slice(0, 5)), framed(events.slice(5)));
  rig.script = paused.script;
  await cancelStream(rig.gateway, { model: 'oai/resp', input: 'hi', stream: true }, { 'x-request-id': 'resp-cancel' }, '/v1/responses');
  paused.release();
  const line = await requestLine(rig.gateway, 'resp-cancel');
  t.match(line, { stream: true, status: 200, completed: false, gateway_code: 'caller_disconnected', prompt_tokens: 20, completion_tokens: 6, usage_estimated: false });
  t.match(line['attempts'], [{ route: 'oai/resp', provider: 'oai', outcome: 'caller_disconnected' }], 'the attempt is logged');
  t.equal(await attemptsCounted(rig.gateway, line), 1, 'the attempt is counted');
  t.match((await attemptSpan(rig.collector, 'resp-cancel')).attributes, {
    'gen_ai.response.id': 'resp_up1',
    'gen_ai.response.model': 'gpt-5-resp-2026',
    'gen_ai.response.finish_reasons': ['completed'],
    'gen_ai.usage.input_tokens': 20,
    'gen_ai.usage.output_tokens': 6,
  });
});

t.test('a native Messages stream the caller cancels: its attempt logged, counted, charged the usage that came after, and described on its span', async (t) => {
  const rig = await startRig(t);
  const paused = pausedScript(CLAUDE_OPENING, claudeClosing('max_tokens', 40));
  rig.script = paused.script;
  await cancelStream(rig.gateway, { model: 'claude/plain', max_tokens: 40, messages: [{ role: 'user', content: 'hi' }], stream: true }, { 'x-request-id': 'msg-cancel', 'anthropic-version': '2023-06-01' }, '/v1/messages');
  paused.release();
  const line = await requestLine(rig.gateway, 'msg-cancel');
  t.match(line, { stream: true, status: 200, completed: false, gateway_code: 'caller_disconnected', prompt_tokens: 11, completion_tokens: 40, usage_estimated: false });
  t.match(line['attempts'], [{ route: 'claude/plain', provider: 'claude', outcome: 'caller_disconnected' }], 'the attempt is logged');
  t.equal(await attemptsCounted(rig.gateway, line), 1, 'the attempt is counted');
  t.match((await attemptSpan(rig.collector, 'msg-cancel')).attributes, {
    'gen_ai.response.id': 'msg_native1',
    'gen_ai.response.model': CLAUDE_MODEL,
    'gen_ai.response.finish_reasons': ['max_tokens'],
    'gen_ai.usage.input_tokens': 11,
    'gen_ai.usage.output_tokens': 40,
  });
});

t.test('a native Responses stream cut after the caller left, without usage: charged an estimate of its text counted once, not again in its .done events', async (t) => {
  const rig = await startRig(t);
  const events = responseEvents(['Hello', ' world'], { end: false });
  const paused = pausedScript(framed(events.slice(0, 5)), framed(events.slice(5)));
  rig.script = async (request, res) => {
    await paused.script(request, res);
    res.destroy();
  };
  await cancelStream(rig.gateway, { model: 'oai/resp', input: 'hi', stream: true }, { 'x-request-id': 'resp-cut-estimate' }, '/v1/responses');
  paused.release();
  const line = await requestLine(rig.gateway, 'resp-cut-estimate');
  t.match(line, { gateway_code: 'caller_disconnected', usage_estimated: true, completion_tokens: estimateTokens('Hello world'.length) });
  t.match(line['attempts'], [{ outcome: 'caller_disconnected' }]);
});
