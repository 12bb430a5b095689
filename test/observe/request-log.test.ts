import t from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';

t.test('one JSON line per request with routing, outcome, timings and tokens', async (t) => {
  const upstream = await startMockUpstream((req, res) => {
    if ((JSON.parse(req.body) as { stream?: boolean }).stream) {
      startEventStream(res);
      res.end(sseBody([chunk('gpt-4o', { content: 'hi' }), { ...chunk('gpt-4o', {}), choices: [], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6, completion_tokens_details: { reasoning_tokens: 2 } } }]));
      return;
    }
    sendJson(res, 200, completionBody('gpt-4o'));
  });
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  await (await gateway.post({ model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, { 'x-request-id': 'trace-1' })).text();
  await (await gateway.post({ model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } }, { 'x-request-id': 'trace-2' })).text();
  await (await gateway.post({ model: 'mock/nope', messages: [{ role: 'user', content: 'hi' }] }, { 'x-request-id': 'trace-3' })).text();
  await gateway.logged(() => (gateway.requestLogs().length >= 3 ? true : undefined));

  const byId = new Map(gateway.requestLogs().map((line) => [line['request_id'], line]));
  t.match(byId.get('trace-1'), {
    method: 'POST', path: '/v1/chat/completions', model: 'mock/gpt-4o', provider: 'mock', stream: false, status: 200, gateway_code: null,
    prompt_tokens: 12, completion_tokens: 3, cached_tokens: 4, reasoning_tokens: 0, duration_ms: Number, upstream_headers_ms: Number,
  });
  t.match(byId.get('trace-2'), { stream: true, status: 200, gateway_code: null, first_event_ms: Number, prompt_tokens: 5, completion_tokens: 1, reasoning_tokens: 2 });
  t.match(byId.get('trace-3'), { status: 400, gateway_code: 'unknown_model', provider: null, upstream_headers_ms: null });
});

t.test('a stream that ends in a fault logs the final event code', async (t) => {
  const upstream = await startMockUpstream((_req, res) => {
    startEventStream(res);
    res.end(sseBody([chunk('gpt-4o', { content: 'partial' })], { done: false }));
  });
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  await (await gateway.post({ model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true }, { 'x-request-id': 'trace-4' })).text();
  t.match(await gateway.requestLog('trace-4'), { status: 200, gateway_code: 'upstream_stream_interrupted' });
});
