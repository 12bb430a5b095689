// OpenTelemetry (README: Tracing): the official SDK exporting OTLP/HTTP JSON to a real receiver on port 0.
import t, { type Test } from 'tap';
import OpenAI from 'openai';
import { startGateway } from '../helpers/gateway.js';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';
import { ask, failing, refusedOrigin, startRig } from '../helpers/failover-setup.js';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { startTelemetry } from '../../src/trace/start-telemetry.js';
import type { TraceSettings } from '../../src/trace/settings.js';
import type { Telemetry } from '../../src/trace/telemetry.js';

function settingsFor(origin: string, overrides: Partial<TraceSettings> = {}): TraceSettings {
  const target = (path: string) => ({ url: `${origin}/v1/${path}`, protocol: 'http/json' as const, headers: {} });
  return {
    traces: target('traces'),
    metrics: target('metrics'),
    serviceName: 'gateway-under-test',
    resourceAttributes: { 'deployment.environment.name': 'test' },
    sampler: 'parentbased_always_on',
    samplerRatio: 1,
    metricIntervalMs: 200,
    ...overrides,
  };
}

/** Telemetry exporting quickly (batches every 50 ms), shut down when the test ends. */
function telemetryFor(t: Test, origin: string, overrides: Partial<TraceSettings> = {}, maxQueuedSpans?: number): Telemetry {
  const telemetry = startTelemetry(settingsFor(origin, overrides), { version: '0.0.0-test', exportDelayMs: 50, ...(maxQueuedSpans ? { maxQueuedSpans } : {}) });
  t.teardown(() => telemetry.shutdown(1000));
  return telemetry;
}

async function receiver(t: Test, options: { holdMs?: number } = {}): Promise<OtlpReceiver> {
  const started = await startOtlpReceiver(options);
  t.teardown(() => started.close());
  return started;
}

const answering = () => startMockUpstream((request, res) => sendJson(res, 200, completionBody(String(JSON.parse(request.body).model))));

/** A receiver, a provider answering completions, and a gateway exporting to the receiver. */
async function tracedGateway(t: Test) {
  const collector = await receiver(t);
  const upstream = await answering();
  t.teardown(() => upstream.close());
  const gateway = await startGateway({ upstreamOrigin: upstream.origin, telemetry: telemetryFor(t, collector.origin) });
  t.teardown(() => gateway.close());
  return { collector, upstream, gateway };
}

const serverSpanOf = (spans: ReceivedSpan[], requestId: string) => spans.find((span) => span.kind === SPAN_KIND.server && span.attributes['gateway.request_id'] === requestId);
const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) => spans.filter((span) => span.parentSpanId === parent.spanId && span.traceId === parent.traceId);

// Several gateways and exports with real waits: more than the default 60 s on a loaded machine.
t.setTimeout(180_000);

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

t.test('a non-streamed answer: a SERVER span under the caller, one CLIENT span with the GenAI attributes, traceparent to the provider, trace id in the log', async (t) => {
  const { collector, upstream, gateway } = await tracedGateway(t);

  const response = await gateway.post(
    { model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'a secret prompt' }], max_tokens: 50, temperature: 0.3, top_p: 0.9 },
    { 'x-request-id': 'traced-1', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, tracestate: 'vendor=abc' },
  );
  t.equal(response.status, 200);
  t.equal(((await response.json()) as { model: string }).model, 'mock/gpt-4o');

  const server = await collector.waitFor(() => serverSpanOf(collector.spans, 'traced-1'));
  t.equal(server.traceId, CALLER_TRACE, "the caller's trace");
  t.equal(server.parentSpanId, CALLER_SPAN, "the caller's span is the parent");
  t.equal(server.name, 'POST /v1/chat/completions');
  t.match(server.attributes, { 'http.request.method': 'POST', 'http.route': '/v1/chat/completions', 'http.response.status_code': 200, 'gateway.routing_string': 'mock/gpt-4o', 'gateway.provider': 'mock' });
  t.match(server.resource, { 'service.name': 'gateway-under-test', 'service.version': '0.0.0-test', 'deployment.environment.name': 'test' });

  const attempts = await collector.waitFor(() => {
    const found = childrenOf(collector.spans, server);
    return found.length > 0 ? found : undefined;
  });
  t.equal(attempts.length, 1, 'one attempt');
  const client = attempts[0]!;
  t.equal(client.kind, SPAN_KIND.client);
  t.equal(client.name, 'chat gpt-4o-2024-11-20', 'named for the upstream model');
  t.match(client.attributes, {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'openai',
    'gen_ai.request.model': 'gpt-4o-2024-11-20',
    'gen_ai.request.max_tokens': 50,
    'gen_ai.request.temperature': 0.3,
    'gen_ai.request.top_p': 0.9,
    'gen_ai.request.stream': false,
    'gen_ai.usage.input_tokens': 12,
    'gen_ai.usage.output_tokens': 3,
    'gen_ai.usage.cache_read.input_tokens': 4,
    'server.address': '127.0.0.1',
    'server.port': Number(new URL(upstream.origin).port),
    'gateway.routing_string': 'mock/gpt-4o',
    'gateway.attempt': 1,
    'gen_ai.response.id': 'chatcmpl-abc123',
    'gen_ai.response.model': 'gpt-4o-2024-11-20',
    'gen_ai.response.finish_reasons': ['stop'],
  });
  t.notOk('error.type' in client.attributes, 'no error');
  t.notOk(JSON.stringify(collector.spans).includes('a secret prompt'), 'no prompt is recorded');
  t.notOk(JSON.stringify(collector.spans).includes('Hello there!'), 'no completion is recorded');

  const sent = upstream.requests[0]!.headers;
  t.equal(sent['traceparent'], `00-${CALLER_TRACE}-${client.spanId}-01`, "the provider gets the attempt span's traceparent");
  t.equal(sent['tracestate'], 'vendor=abc', "and the caller's tracestate");

  const line = gateway.requestLogs().find((entry) => entry['request_id'] === 'traced-1');
  t.equal(line?.['trace_id'], CALLER_TRACE, 'the log line leads to the trace');
  t.equal(client.attributes['gateway.endpoint'], (line?.['attempts'] as { endpoint: string }[])[0]!.endpoint, 'the endpoint as the log line names it');
});

t.test('a streamed answer: the attempt span ends with the stream and carries its time to first chunk; GenAI metrics arrive', async (t) => {
  const collector = await receiver(t);
  const upstream = await startMockUpstream(async (_request, res) => {
    startEventStream(res);
    res.write(sseBody([chunk('gpt-4.1-mini', { role: 'assistant', content: 'Hel' })], { done: false }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    res.end(sseBody([chunk('gpt-4.1-mini', { content: 'lo' }, { finish_reason: 'stop' }), { ...chunk('gpt-4.1-mini', {}), choices: [], usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } }]));
  });
  t.teardown(() => upstream.close());
  const gateway = await startGateway({ upstreamOrigin: upstream.origin, telemetry: telemetryFor(t, collector.origin) });
  t.teardown(() => gateway.close());

  const client = new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'unused', maxRetries: 0 });
  const stream = await client.chat.completions.create({ model: 'mock/gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
  let text = '';
  for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
  t.equal(text, 'Hello', 'the answer is unchanged');

  const server = await collector.waitFor(() => collector.spans.find((span) => span.kind === SPAN_KIND.server));
  const attempt = await collector.waitFor(() => childrenOf(collector.spans, server)[0]);
  t.equal(server.parentSpanId, '', 'no caller trace: the request starts one');
  t.match(attempt.attributes, { 'gen_ai.request.stream': true, 'gen_ai.usage.input_tokens': 7, 'gen_ai.usage.output_tokens': 2, 'gen_ai.response.time_to_first_chunk': Number });
  const firstChunk = attempt.attributes['gen_ai.response.time_to_first_chunk'] as number;
  t.ok(firstChunk >= 0 && firstChunk < 10, 'time to first chunk in seconds');
  t.match(server.attributes, { 'gen_ai.request.stream': true, 'http.response.status_code': 200 });
  t.equal(upstream.requests[0]!.headers['traceparent'], `00-${server.traceId}-${attempt.spanId}-01`);

  const tokens = await collector.waitFor(() => {
    const found = collector.points.filter((point) => point.metric === 'gen_ai.client.token.usage' && point.count > 0);
    return found.length >= 2 ? found : undefined;
  });
  const byType = Object.fromEntries(tokens.map((point) => [point.attributes['gen_ai.token.type'], point]));
  t.match(byType['input'], { unit: '{token}', sum: 7, attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4.1-mini' } });
  t.match(byType['output'], { sum: 2 });
  const names = new Set(collector.points.map((point) => point.metric));
  for (const name of ['gen_ai.client.operation.duration', 'gen_ai.client.operation.time_to_first_chunk', 'gen_ai.server.request.duration', 'gen_ai.server.time_to_first_token']) {
    t.ok(names.has(name), `${name} is exported`);
  }
});

t.test('a failover: one CLIENT span per attempt, the failed one with its error.type', async (t) => {
  const collector = await receiver(t);
  const rig = await startRig(t, { soloUrl: await refusedOrigin(), telemetry: telemetryFor(t, collector.origin) });
  const response = await rig.gateway.post(ask('solo/main'), { 'x-request-id': 'failover-1' });
  t.equal(response.status, 200, 'served by the fallback');

  const server = await collector.waitFor(() => serverSpanOf(collector.spans, 'failover-1'));
  const attempts = await collector.waitFor(() => {
    const found = childrenOf(collector.spans, server);
    return found.length >= 2 ? found : undefined;
  });
  attempts.sort((a, b) => Number(a.attributes['gateway.attempt']) - Number(b.attributes['gateway.attempt']));
  t.equal(attempts.length, 2);
  t.match(attempts[0]!.attributes, { 'gateway.attempt': 1, 'gateway.routing_string': 'solo/main', 'gen_ai.request.model': 'main-upstream', 'error.type': 'upstream_unreachable', 'gateway.code': 'upstream_unreachable' });
  t.equal(attempts[0]!.statusCode, 2, 'the failed attempt has status ERROR');
  t.match(attempts[1]!.attributes, { 'gateway.attempt': 2, 'gateway.routing_string': 'backup/other', 'gen_ai.request.model': 'other-upstream', 'gen_ai.usage.output_tokens': 3 });
  t.notOk('error.type' in attempts[1]!.attributes);
  t.equal(rig.backup.requests[0]!.headers['traceparent'], `00-${server.traceId}-${attempts[1]!.spanId}-01`);
});

t.test('an anthropic-dialect attempt: gen_ai.provider.name anthropic, the provider\'s own id, model and stop reason', async (t) => {
  const collector = await receiver(t);
  const rig = await startRig(t, { soloUrl: await refusedOrigin(), telemetry: telemetryFor(t, collector.origin) });
  const response = await rig.gateway.post(ask('solo/to-claude'), { 'x-request-id': 'claude-1' });
  t.equal(response.status, 200);
  const server = await collector.waitFor(() => serverSpanOf(collector.spans, 'claude-1'));
  const attempt = await collector.waitFor(() => childrenOf(collector.spans, server).find((span) => span.attributes['gateway.attempt'] === 2));
  t.match(attempt.attributes, {
    'gen_ai.provider.name': 'anthropic',
    'gen_ai.request.model': 'claude-sonnet-x',
    'gen_ai.response.id': 'msg_1',
    'gen_ai.response.model': 'claude-sonnet-x',
    'gen_ai.response.finish_reasons': ['end_turn'],
    'gen_ai.usage.input_tokens': 5,
    'gen_ai.usage.output_tokens': 2,
  });
  t.ok(String(rig.claude.requests[0]?.headers['traceparent']).startsWith(`00-${server.traceId}-${attempt.spanId}`), 'the anthropic provider gets the traceparent too');
});

t.test('a failed request: the SERVER span has the gateway code as error.type', async (t) => {
  const collector = await receiver(t);
  const rig = await startRig(t, { maxAttempts: 1, telemetry: telemetryFor(t, collector.origin) });
  rig.solo.behave = failing(500);
  const response = await rig.gateway.post(ask('solo/main'), { 'x-request-id': 'failed-1' });
  t.equal(response.status, 502);
  const server = await collector.waitFor(() => serverSpanOf(collector.spans, 'failed-1'));
  t.match(server.attributes, { 'http.response.status_code': 502, 'error.type': 'provider_error', 'gateway.code': 'provider_error' });
  t.equal(server.statusCode, 2);
  const attempt = await collector.waitFor(() => childrenOf(collector.spans, server)[0]);
  t.match(attempt.attributes, { 'error.type': '500', 'gateway.code': 'provider_error' });
});

t.test('a collector that is down or answers late changes no answer; spans beyond the queue are dropped and counted', async (t) => {
  const upstream = await answering();
  t.teardown(() => upstream.close());
  const slow = await receiver(t, { holdMs: 15_000 });
  const cases = [
    { name: 'down', origin: await refusedOrigin() },
    { name: 'slow', origin: slow.origin },
  ];
  for (const { name, origin } of cases) {
    const gateway = await startGateway({ upstreamOrigin: upstream.origin, telemetry: telemetryFor(t, origin, {}, 4) });
    t.teardown(() => gateway.close());
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => gateway.post({ model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'hi' }] })));
      t.same(answers.map((answer) => answer.status), Array(10).fill(200), `collector ${name}: every answer is 200`);
      const bodies = (await Promise.all(answers.map((answer) => answer.json()))) as { choices: { message: { content: string } }[] }[];
      t.ok(bodies.every((body) => body.choices[0]!.message.content === 'Hello there!'), `collector ${name}: every answer whole`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const metrics = await (await fetch(`${gateway.origin}/metrics`)).text();
    const dropped = Number(/^gateway_trace_spans_dropped_total (\d+)/m.exec(metrics)?.[1]);
    t.ok(dropped > 0, `collector ${name}: spans beyond the queue of 4 were dropped and counted (${dropped})`);
    t.same(gateway.tracked(), { inFlight: 0, stopHooks: 0 }, `collector ${name}: nothing left in flight`);
  }
});

t.test('sampled out: no span is exported, the provider still gets the sampling decision', async (t) => {
  const { collector, upstream, gateway } = await tracedGateway(t);
  const response = await gateway.post(ask('mock/gpt-4o'), { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-00`, 'x-request-id': 'unsampled' });
  t.equal(response.status, 200);
  const sent = String(upstream.requests[0]!.headers['traceparent']);
  t.match(sent, new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-00$`), 'same trace, not sampled');
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.same(collector.spans.filter((span) => span.traceId === CALLER_TRACE), [], 'nothing exported');
  t.equal(gateway.requestLogs()[0]?.['trace_id'], null, 'no trace id logged for a trace that is not recorded');
});

t.test('a hostile traceparent is ignored: the request starts its own trace', async (t) => {
  const { collector, upstream, gateway } = await tracedGateway(t);
  const hostile = ['00-00000000000000000000000000000000-00f067aa0ba902b7-01', 'ff-' + 'a'.repeat(32) + '-' + 'b'.repeat(16) + '-01', 'x'.repeat(8000), `00-${CALLER_TRACE}-${CALLER_SPAN}-01,junk`];
  for (const [index, traceparent] of hostile.entries()) {
    const response = await gateway.post(ask('mock/gpt-4o'), { traceparent, tracestate: 'k=' + 'v'.repeat(4000), 'x-request-id': `hostile-${index}` });
    t.equal(response.status, 200, `traceparent ${index}: answered`);
  }
  for (const index of hostile.keys()) {
    const server = await collector.waitFor(() => serverSpanOf(collector.spans, `hostile-${index}`));
    t.match(server.traceId, /^[0-9a-f]{32}$/, `traceparent ${index}: a valid trace`);
    t.not(server.traceId, '00000000000000000000000000000000');
  }
  t.ok(upstream.requests.every((request) => String(request.headers['tracestate'] ?? '').length <= 512), "an oversized tracestate is not passed on (the W3C limit is 512)");
});

t.test('the other inbound endpoints are traced too, and every SERVER span names its caller', async (t) => {
  const { collector, gateway } = await tracedGateway(t);
  const response = await fetch(`${gateway.origin}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': 'traced-responses' },
    body: JSON.stringify({ model: 'mock/gpt-4o', input: 'hello' }),
  });
  t.equal(response.status, 200);
  await response.text();
  const server = await collector.waitFor(() => serverSpanOf(collector.spans, 'traced-responses'));
  t.equal(server.name, 'POST /v1/responses');
  t.match(server.attributes, { 'http.route': '/v1/responses', 'gateway.routing_string': 'mock/gpt-4o', 'gateway.caller': 'anonymous' });
  const attempts = await collector.waitFor(() => {
    const found = childrenOf(collector.spans, server);
    return found.length > 0 ? found : undefined;
  });
  t.equal(attempts.length, 1, 'one CLIENT span for its one attempt');
});
