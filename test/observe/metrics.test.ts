import t from 'tap';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';
import { parseExposition, sumOf, valueOf, type Sample } from '../helpers/prometheus.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';
import { estimateTokens } from '../../src/observe/usage-estimate.js';

const CALLER_KEY = 'gw-metrics-caller-key-31d9';
const auth = { authorization: `Bearer ${CALLER_KEY}` };
const hi = [{ role: 'user', content: 'hi' }];

async function scrape(gateway: RunningGateway): Promise<{ response: Response; text: string; samples: Sample[] }> {
  const response = await fetch(`${gateway.origin}/metrics`);
  const text = await response.text();
  return { response, text, samples: parseExposition(text) };
}

/** Metrics are observed when the response closes, which the caller may see a moment later than its body. */
async function scrapeOnceCounted(gateway: RunningGateway, requests: number) {
  const deadline = Date.now() + 3000;
  for (;;) {
    const result = await scrape(gateway);
    if (sumOf(result.samples, 'gateway_requests_total') >= requests || Date.now() > deadline) return result;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

t.test('GET /metrics counts requests by roster model, provider, status and gateway_code, with timings and tokens', async (t) => {
  let releaseSlow!: () => void;
  const slowReleased = new Promise<void>((resolve) => (releaseSlow = resolve));
  const upstream = await startMockUpstream(async (req, res) => {
    const body = JSON.parse(req.body) as { model: string; stream?: boolean };
    if (body.model === 'gpt-4.1-mini') return sendJson(res, 429, { error: { message: 'Rate limit reached', code: 'rate_limit_exceeded' } });
    if (body.model === 'anthropic/claude-sonnet-4.5') {
      await slowReleased;
      return sendJson(res, 200, completionBody('claude-sonnet-4.5'));
    }
    if (body.stream && req.headers['x-request-id'] === 'cut') {
      startEventStream(res);
      res.end(sseBody([chunk('gpt-4o', { content: 'partial' })], { done: false }));
      return;
    }
    if (body.stream) {
      startEventStream(res);
      const usage = { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6, completion_tokens_details: { reasoning_tokens: 2 } };
      res.end(sseBody([chunk('gpt-4o', { content: 'hi' }), { ...chunk('gpt-4o', {}), choices: [], usage }]));
      return;
    }
    sendJson(res, 200, completionBody('gpt-4o'));
  });
  const gateway = await startGateway({ upstreamOrigin: upstream.origin, callerKeys: [CALLER_KEY] });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  t.equal((await gateway.post({ model: 'mock/gpt-4o', messages: hi }, auth)).status, 200);
  const miss = await gateway.post({ model: 'mock/evil-label-xyz', messages: hi }, auth);
  t.equal(miss.status, 400);
  await miss.text();
  const limited = await gateway.post({ model: 'mock/gpt-4.1-mini', messages: hi }, auth);
  t.equal(limited.status, 429);
  await limited.text();
  const stream = await gateway.post({ model: 'mock/gpt-4o', messages: hi, stream: true, stream_options: { include_usage: true } }, auth);
  t.match(await stream.text(), /"prompt_tokens":5/);
  const cut = await gateway.post({ model: 'mock/gpt-4o', messages: hi, stream: true }, { ...auth, 'x-request-id': 'cut' });
  t.equal(cut.status, 200);
  t.match(await cut.text(), /upstream_stream_interrupted/);
  const noKey = await gateway.post({ model: 'mock/gpt-4o', messages: hi });
  t.equal(noKey.status, 401);
  await noKey.text();

  // One request still waiting for its provider: in flight.
  const slow = gateway.post({ model: 'mock/anthropic/claude-sonnet-4.5', messages: hi }, auth);
  while (upstream.requests.length < 5) await new Promise((resolve) => setTimeout(resolve, 5));
  const during = await scrapeOnceCounted(gateway, 6);
  t.equal(during.response.status, 200, 'no caller key needed');
  t.match(during.response.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  t.equal(valueOf(during.samples, 'gateway_requests_in_flight'), 1, 'the waiting request is in flight; the scrape itself is not');
  releaseSlow();
  t.equal((await slow).status, 200);

  const { text, samples } = await scrapeOnceCounted(gateway, 7);
  const requests = (labels: Record<string, string>) => valueOf(samples, 'gateway_requests_total', labels);
  t.equal(requests({ model: 'mock/gpt-4o', provider: 'mock', status: '200', gateway_code: '', caller: 'key' }), 2, 'the answer and the stream');
  t.equal(requests({ model: 'mock/gpt-4o', provider: 'mock', status: '200', gateway_code: 'upstream_stream_interrupted', caller: 'key' }), 1, "a stream's final error event");
  t.equal(requests({ model: '', provider: '', status: '400', gateway_code: 'unknown_model', caller: 'key' }), 1, 'a roster miss has no model label');
  t.equal(requests({ model: 'mock/gpt-4.1-mini', provider: 'mock', status: '429', gateway_code: 'provider_rate_limited', caller: 'key' }), 1);
  t.equal(requests({ model: '', provider: '', status: '401', gateway_code: 'unauthorized', caller: '' }), 1);
  t.equal(requests({ model: 'mock/anthropic/claude-sonnet-4.5', provider: 'mock', status: '200', gateway_code: '', caller: 'key' }), 1);
  t.equal(sumOf(samples, 'gateway_requests_total'), 7, 'scrapes are not counted as requests');
  t.notMatch(text, /evil-label-xyz/, "a model string off the roster never becomes a label");

  t.equal(valueOf(samples, 'gateway_request_duration_seconds_count', { model: 'mock/gpt-4o', provider: 'mock', stream: 'true' }), 2);
  t.equal(valueOf(samples, 'gateway_request_duration_seconds_count', { model: 'mock/gpt-4o', provider: 'mock', stream: 'false' }), 1);
  t.equal(valueOf(samples, 'gateway_request_duration_seconds_bucket', { model: 'mock/gpt-4o', provider: 'mock', stream: 'false', le: '300' }), 1);
  t.ok(valueOf(samples, 'gateway_request_duration_seconds_sum', { model: 'mock/gpt-4o', provider: 'mock', stream: 'false' })! > 0);
  t.equal(valueOf(samples, 'gateway_upstream_headers_seconds_count', { provider: 'mock' }), 5, 'every request that reached the provider');
  t.equal(valueOf(samples, 'gateway_first_event_seconds_count', { provider: 'mock' }), 2, 'the two streams');

  const tokens = (kind: string, model = 'mock/gpt-4o') => valueOf(samples, 'gateway_tokens_total', { model, kind });
  // The cut stream had no usage: it is charged the estimate (usage-estimate.ts) of the body sent and of 'partial'.
  const cutBody = upstream.requests.find((request) => request.headers['x-request-id'] === 'cut')!.body;
  t.equal(tokens('prompt'), 12 + 5 + estimateTokens(cutBody.length));
  t.equal(tokens('completion'), 3 + 1 + estimateTokens('partial'.length));
  t.equal(tokens('cached'), 4);
  t.equal(tokens('reasoning'), 2);
  t.equal(tokens('prompt', 'mock/anthropic/claude-sonnet-4.5'), 12);
  t.equal(valueOf(samples, 'gateway_requests_in_flight'), 0, 'in flight back to 0');
  t.equal(valueOf(samples, 'process_cpu_user_seconds_total'), undefined, 'process metrics are left to the one gateway of a process (server.ts)');
});

t.test('each gateway has its own registry; other methods on /metrics are 405', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('gpt-4o')));
  const busy = await startGateway({ upstreamOrigin: upstream.origin });
  const idle = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([busy.close(), idle.close(), upstream.close()]));
  t.equal((await busy.post({ model: 'mock/gpt-4o', messages: hi })).status, 200);
  t.equal(sumOf((await scrapeOnceCounted(busy, 1)).samples, 'gateway_requests_total'), 1);
  t.equal(sumOf((await scrape(idle)).samples, 'gateway_requests_total'), 0);

  const post = await fetch(`${busy.origin}/metrics`, { method: 'POST' });
  t.equal(post.status, 405);
  t.equal(post.headers.get('allow'), 'GET, HEAD');
  t.match(await post.json(), { error: { gateway_code: 'method_not_allowed' } });
});

t.test('token counts that are not non-negative safe integers are not counted, and logged once per request as an anomaly', async (t) => {
  const badUsage = { prompt_tokens: 1e308, completion_tokens: 2.5, total_tokens: -1, prompt_tokens_details: { cached_tokens: -3 }, completion_tokens_details: { reasoning_tokens: '7' } };
  const upstream = await startMockUpstream((req, res) => {
    if ((JSON.parse(req.body) as { stream?: boolean }).stream) {
      startEventStream(res);
      // Two usage events, both wrong: still one anomaly line for the request.
      res.end(sseBody([chunk('gpt-4o', { content: 'hi' }), { ...chunk('gpt-4o', {}), choices: [], usage: badUsage }, { ...chunk('gpt-4o', {}), choices: [], usage: { ...badUsage, prompt_tokens: 9007199254740993 } }]));
      return;
    }
    if (req.headers['x-request-id'] === 'fine') return sendJson(res, 200, completionBody('gpt-4o'));
    sendJson(res, 200, { ...completionBody('gpt-4o'), usage: badUsage });
  });
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  for (const id of ['bad-1', 'bad-2']) t.same((await (await gateway.post({ model: 'mock/gpt-4o', messages: hi }, { 'x-request-id': id })).json() as { usage: unknown }).usage, badUsage, 'the caller still gets what the provider said');
  await (await gateway.post({ model: 'mock/gpt-4o', messages: hi, stream: true, stream_options: { include_usage: true } }, { 'x-request-id': 'bad-stream' })).text();
  await (await gateway.post({ model: 'mock/gpt-4o', messages: hi }, { 'x-request-id': 'fine' })).text();

  const { text, samples } = await scrapeOnceCounted(gateway, 4);
  t.notMatch(text, /^gateway_tokens_total\{[^}]*\} (?:[+-]?Inf|NaN)$/m, 'no counter pinned at +Inf');
  const tokens = (kind: string) => valueOf(samples, 'gateway_tokens_total', { model: 'mock/gpt-4o', kind });
  t.equal(tokens('prompt'), 12, 'only the well-formed answer counts');
  t.equal(tokens('completion'), 3);
  t.equal(tokens('cached'), 4);

  const anomalies = gateway.logLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => String(line['msg']).startsWith('provider anomaly'));
  t.equal(anomalies.length, 3, 'one line per request that had any, none for the good one');
  const fields = { prompt_tokens: 'too_large', completion_tokens: 'fractional', 'prompt_tokens_details.cached_tokens': 'negative', 'completion_tokens_details.reasoning_tokens': 'not_a_number' };
  t.strictSame(anomalies.map((line) => line['request_id']).sort(), ['bad-1', 'bad-2', 'bad-stream']);
  for (const line of anomalies) t.match(line, { level: 40, provider: 'mock', fields });
  const requestLine = gateway.requestLogs().find((line) => line['request_id'] === 'bad-1');
  t.match(requestLine, { prompt_tokens: null, completion_tokens: null, cached_tokens: null, reasoning_tokens: null }, 'the request line holds no unusable figure');
});
