// Issue 34, items 7 and 15: a stream the caller cancels is charged (the provider's usage read after the caller left,
// else an estimate marked usage_estimated), and its log line, metrics and attempt span say how it went.
import t, { type Test } from 'tap';
import type { ServerResponse } from 'node:http';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { completionBody, sendJson, startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';
import { SEARCH_KEY, bearer, callersRoutes, digestLine } from '../helpers/callers-routes.js';
import { ANTHROPIC_ROUTES } from '../helpers/mock-anthropic.js';
import { parseExposition, valueOf } from '../helpers/prometheus.js';
import { SPAN_KIND } from '../helpers/otlp-receiver.js';
import { cancelAfterFirstEvent as cancelStream, requestLine, tracedToReceiver } from '../helpers/cancelled-stream.js';
import type { Telemetry } from '../../src/trace/telemetry.js';
import { USAGE_TAIL_MS } from '../../src/routing/stream/relay-options.js';
import { AnswerTextCounter, EXACT_SCAN_CHARS, answerTextChars, estimateTokens } from '../../src/observe/usage-estimate.js';

t.setTimeout(120_000);

const ROUTES = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    limits: { tokens_per_minute: 1000 }`);
/** mock/big's price in callersRoutes: 1 USD per million prompt tokens, 2 per million completion tokens. */
const costOf = (prompt: number, completion: number) => Math.round(prompt * 1 + completion * 2) / 1e6;
/** A prompt of about 1,200 tokens by the estimate, more than the caller's tokens_per_minute. */
const LONG_PROMPT = [{ role: 'user', content: 'x'.repeat(4800) }];

/**
 * A provider that streams one chunk, then waits for `rest` (the test calls it once the caller has left) and sends
 * what it is given, as OpenAI would (`then`: the events after the first, without [DONE] when `done` is false).
 */
async function pausedProvider(t: Test) {
  let release: (() => void) | undefined;
  const resumed = new Promise<void>((resolve) => (release = resolve));
  let then: { events: unknown[]; done: boolean } = { events: [], done: true };
  let responses: ServerResponse[] = [];
  const upstream = await startMockUpstream(async (request, res) => {
    const model = String(JSON.parse(request.body).model);
    responses.push(res);
    startEventStream(res);
    res.write(sseBody([chunk(model, { role: 'assistant', content: 'Hello' })], { done: false }));
    await resumed;
    if (then.done) res.end(sseBody(then.events.map((event) => (typeof event === 'function' ? event(model) : event))));
    else res.write(sseBody(then.events.map((event) => (typeof event === 'function' ? event(model) : event)), { done: false }));
  });
  t.teardown(() => upstream.close());
  return {
    upstream,
    /** What the provider sends once resumed: functions are called with the upstream model. */
    sendAfter(events: unknown[], done = true) {
      then = { events, done };
    },
    resume: () => release!(),
    get responses() {
      return responses;
    },
    reset() {
      responses = [];
    },
  };
}

/** A chat stream of the search team, cancelled once its first event arrived. */
const cancelAfterFirstEvent = (gateway: RunningGateway, body: unknown, headers = bearer(SEARCH_KEY)) => cancelStream(gateway, body, headers);

async function startRig(t: Test, provider: { upstream: MockUpstream }, extra: { telemetry?: Telemetry } = {}) {
  const gateway = await startGateway({ routes: ROUTES, upstreamOrigin: provider.upstream.origin, ...extra });
  t.teardown(() => gateway.close());
  return gateway;
}

t.test('the provider usage that comes after the caller left is charged: log line, tpm, attempts and the attempt metric', async (t) => {
  const provider = await pausedProvider(t);
  const gateway = await startRig(t, provider);
  const usage = { prompt_tokens: 600, completion_tokens: 700, total_tokens: 1300 };
  provider.sendAfter([(model: string) => chunk(model, { content: ' world' }), (model: string) => ({ ...chunk(model, {}), choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] }), (model: string) => ({ ...chunk(model, {}), choices: [], usage })]);
  await cancelAfterFirstEvent(gateway, { model: 'mock/big', messages: [{ role: 'user', content: 'hi' }], stream: true });
  provider.resume();
  const line = await requestLine(gateway);
  t.match(line, { caller: 'search-team', stream: true, status: 200, completed: false, gateway_code: 'caller_disconnected', prompt_tokens: 600, completion_tokens: 700, usage_estimated: false });
  t.equal(line['cost_usd'], costOf(600, 700), 'priced from the provider usage');
  t.match(line['attempts'], [{ route: 'mock/big', provider: 'mock', outcome: 'caller_disconnected' }], 'the attempt is logged');
  const metrics = parseExposition(await (await fetch(`${gateway.origin}/metrics`)).text());
  t.equal(valueOf(metrics, 'gateway_upstream_attempts_total', { provider: 'mock', endpoint: String(line['attempts'] && (line['attempts'] as { endpoint: string }[])[0]!.endpoint), outcome: 'caller_disconnected' }), 1, 'the attempt is counted');
  t.equal(valueOf(metrics, 'gateway_tokens_total', { model: 'mock/big', kind: 'completion' }), 700);
  const next = await gateway.post({ model: 'mock/big', messages: [{ role: 'user', content: 'hi' }], stream: true }, bearer(SEARCH_KEY));
  t.equal(next.status, 429, 'the 1,300 tokens took the caller over its 1,000 tokens per minute');
  t.equal(next.headers.get('x-ratelimit-remaining-tokens'), '0');
  await next.text();
});

t.test('a provider that sends no usage: the answer is charged an estimate, marked usage_estimated', async (t) => {
  const provider = await pausedProvider(t);
  const gateway = await startRig(t, provider);
  const after = ' world, and more text the caller never saw';
  provider.sendAfter([(model: string) => chunk(model, { content: after }), (model: string) => ({ ...chunk(model, {}), choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] })]);
  await cancelAfterFirstEvent(gateway, { model: 'mock/big', messages: LONG_PROMPT, stream: true });
  provider.resume();
  const line = await requestLine(gateway);
  const sent = provider.upstream.requests[0]!.body;
  const prompt = estimateTokens(sent.length);
  const completion = estimateTokens('Hello'.length + after.length);
  t.ok(prompt > 1000, `the prompt estimate (${prompt}) is over the tokens per minute`);
  t.match(line, { gateway_code: 'caller_disconnected', prompt_tokens: prompt, completion_tokens: completion, usage_estimated: true });
  t.equal(line['cost_usd'], costOf(prompt, completion));
  t.match(line['attempts'], [{ outcome: 'caller_disconnected' }]);
  const next = await gateway.post({ model: 'mock/big', messages: [{ role: 'user', content: 'hi' }] }, bearer(SEARCH_KEY));
  t.equal(next.status, 429, 'the estimate took the caller over its tokens per minute');
  await next.text();
});

t.test('a provider still sending after the caller left is read for at most USAGE_TAIL_MS, then charged an estimate', async (t) => {
  const provider = await pausedProvider(t);
  const gateway = await startRig(t, provider);
  provider.sendAfter([(model: string) => chunk(model, { content: ' and on' })], false);
  await cancelAfterFirstEvent(gateway, { model: 'mock/big', messages: [{ role: 'user', content: 'hi' }], stream: true });
  const leftAt = performance.now();
  provider.resume();
  const upstreamResponse = provider.responses[0]!;
  const upstreamClosed = upstreamResponse.closed ? Promise.resolve() : new Promise<void>((resolve) => upstreamResponse.once('close', resolve));
  const line = await requestLine(gateway);
  await upstreamClosed;
  const waited = performance.now() - leftAt;
  t.ok(waited >= USAGE_TAIL_MS - 100 && waited < USAGE_TAIL_MS + 10_000, `the provider was read for the tail and let go (${Math.round(waited)} ms)`);
  t.match(line, { usage_estimated: true, completion_tokens: estimateTokens('Hello and on'.length) });
  t.same(gateway.tracked(), { inFlight: 0, stopHooks: 0 });
});

t.test('a drain waits for a stream reading its usage after the caller left, and a forced stop ends that reading at once', async (t) => {
  const provider = await pausedProvider(t);
  const gateway = await startRig(t, provider);
  provider.sendAfter([(model: string) => chunk(model, { content: ' and on' })], false);
  await cancelAfterFirstEvent(gateway, { model: 'mock/big', messages: [{ role: 'user', content: 'hi' }], stream: true });
  provider.resume();
  const startedAt = performance.now();
  t.same(await gateway.drain(200), { forcedStops: 1 }, 'the drain did not end while the usage was still being read');
  const took = performance.now() - startedAt;
  t.ok(took < USAGE_TAIL_MS, `the forced stop ended the reading (${Math.round(took)} ms)`);
  t.match(await requestLine(gateway), { usage_estimated: true, completion_tokens: estimateTokens('Hello and on'.length) });
  t.same(gateway.tracked(), { inFlight: 0, stopHooks: 0 });
});

t.test('a whole stream or answer without usage is charged an estimate too; one with usage is not marked', async (t) => {
  let withUsage = false;
  const upstream = await startMockUpstream((request, res) => {
    const model = String(JSON.parse(request.body).model);
    if (JSON.parse(request.body).stream !== true) return sendJson(res, 200, { ...completionBody(model, 'A whole answer'), usage: undefined });
    startEventStream(res);
    const events: unknown[] = [chunk(model, { role: 'assistant', content: 'Hi there' }), { ...chunk(model, {}), choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] }];
    if (withUsage) events.push({ ...chunk(model, {}), choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
    res.end(sseBody(events));
  });
  t.teardown(() => upstream.close());
  const gateway = await startRig(t, { upstream });
  const answer = await gateway.post({ model: 'mock/big', messages: [{ role: 'user', content: 'hi' }], stream: true }, bearer(SEARCH_KEY));
  await answer.text();
  withUsage = true;
  await (await gateway.post({ model: 'mock/big', messages: [{ role: 'user', content: 'hi' }], stream: true }, bearer(SEARCH_KEY))).text();
  const deadline = Date.now() + 10_000;
  while (gateway.requestLogs().length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  const [estimated, reported] = gateway.requestLogs();
  t.match(estimated, { completed: true, gateway_code: null, usage_estimated: true, prompt_tokens: estimateTokens(upstream.requests[0]!.body.length), completion_tokens: estimateTokens('Hi there'.length) });
  t.match(reported, { usage_estimated: false, prompt_tokens: 3, completion_tokens: 2 });
  await (await gateway.post({ model: 'mock/big', messages: [{ role: 'user', content: 'hi' }] }, bearer(SEARCH_KEY))).text();
  while (gateway.requestLogs().length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  t.match(gateway.requestLogs()[2], { stream: false, usage_estimated: true, prompt_tokens: estimateTokens(upstream.requests[2]!.body.length), completion_tokens: estimateTokens('A whole answer'.length) });
});

t.test('a stream cut after only its opening usage (Anthropic message_start) is charged at least the estimate of its text', async (t) => {
  let release!: () => void;
  const resumed = new Promise<void>((resolve) => (release = resolve));
  const later = 'y'.repeat(400);
  const event = (data: unknown) => `event: ${(data as { type: string }).type}\ndata: ${JSON.stringify(data)}\n\n`;
  const upstream = await startMockUpstream(async (_request, res) => {
    startEventStream(res);
    res.write(
      event({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-plain-1', content: [], stop_reason: null, usage: { input_tokens: 50, output_tokens: 1 } } }) +
        event({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
        event({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } }),
    );
    await resumed;
    await new Promise((resolve) => res.write(event({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: later } }), resolve));
    res.destroy(); // cut: no message_delta with the output count, no message_stop
  });
  t.teardown(() => upstream.close());
  const gateway = await startGateway({ routes: ANTHROPIC_ROUTES, upstreamOrigin: upstream.origin });
  t.teardown(() => gateway.close());
  await cancelAfterFirstEvent(gateway, { model: 'claude/plain', messages: [{ role: 'user', content: 'hi' }], stream: true }, {});
  release();
  const line = await requestLine(gateway);
  t.match(line, { prompt_tokens: 50, completion_tokens: estimateTokens('Hello'.length + later.length), usage_estimated: true, gateway_code: 'caller_disconnected' });
});

t.test('the attempt span of a cancelled stream has the response model, id and finish reasons, and its usage', async (t) => {
  const { collector, telemetry } = await tracedToReceiver(t);
  const provider = await pausedProvider(t);
  const gateway = await startRig(t, provider, { telemetry });
  const usage = { prompt_tokens: 12, completion_tokens: 34, total_tokens: 46 };
  provider.sendAfter([(model: string) => ({ ...chunk(model, {}), choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'length' }] }), (model: string) => ({ ...chunk(model, {}), choices: [], usage })]);
  await cancelAfterFirstEvent(gateway, { model: 'mock/big', messages: [{ role: 'user', content: 'hi' }], stream: true });
  provider.resume();
  const span = await collector.waitFor(() => collector.spans.find((found) => found.kind === SPAN_KIND.client), 20_000);
  const upstreamModel = String(JSON.parse(provider.upstream.requests[0]!.body).model);
  t.match(span.attributes, {
    'gen_ai.response.model': upstreamModel,
    'gen_ai.response.id': 'chatcmpl-stream1',
    'gen_ai.response.finish_reasons': ['length'],
    'gen_ai.usage.input_tokens': 12,
    'gen_ai.usage.output_tokens': 34,
  });
  t.match(await requestLine(gateway), { attempts: [{ outcome: 'caller_disconnected' }] });
});

t.test('answerTextChars counts the text fields of chat, Messages and Responses events, not their JSON; AnswerTextCounter extrapolates a long stream', async (t) => {
  t.equal(answerTextChars('data: {"id":"x","choices":[{"delta":{"role":"assistant","content":"Hello"}}]}\n\n'), 5);
  t.equal(answerTextChars('{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\\"a\\":1}"}}]}}]}'), 9, 'an escape counts as written');
  t.equal(answerTextChars('{"type":"content_block_delta","delta":{"type":"text_delta","text":"abc"}}'), 3);
  t.equal(answerTextChars('{"type":"response.output_text.delta","delta":"abcd"}'), 4);
  t.equal(answerTextChars('{"content":null,"model":"m"}'), 0);
  t.equal(answerTextChars('{"content":"cut'), 3, 'a cut value counts to the end');
  const counter = new AnswerTextCounter();
  const event = `data: {"choices":[{"delta":{"content":"${'a'.repeat(50)}"}}]}\n\n`; // 50 of its 90 characters are text
  for (let i = 0; i < 1000; i++) counter.add(event);
  t.ok(event.length * 1000 > EXACT_SCAN_CHARS * 4, 'most events are beyond the exact scan');
  t.equal(counter.chars, 50 * 1000, 'beyond the exact scan, events count by the share of text the first ones held');
  t.equal(estimateTokens(0), 0);
  t.equal(estimateTokens(1), 1);
  t.equal(estimateTokens(8), 2);
  t.equal(estimateTokens(9), 3);
});
