import type { ServerResponse } from 'node:http';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { envelopeOf, GATEWAY_ROUTES, startGateway } from '../helpers/gateway.js';
import { drained } from '../../scripts/bench/drained.js';
import { sendJson, startMockUpstream } from '../helpers/mock-upstream.js';
import { bytePieces, chunk, readDataEvents, sseBody, startEventStream, writeInPieces } from '../helpers/sse-upstream.js';
import { USAGE_TAIL_MS } from '../../src/routing/stream/relay-options.js';

const ask = { model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true };

async function withStream(t: Test, handler: (res: ServerResponse, body: string) => void | Promise<void>, routes = GATEWAY_ROUTES, options: { maxUpstreamBodyBytes?: number } = {}) {
  const upstream = await startMockUpstream((req, res) => handler(res, req.body));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin, routes, ...options });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  return { upstream, gateway };
}

t.test('answers 200 text/event-stream with no-buffering headers and model rewritten in every chunk', async (t) => {
  const events = [
    chunk('gpt-4o-2024-11-20', { role: 'assistant', content: '' }),
    chunk('gpt-4o-2024-11-20', { content: 'Hel' }, { unknown_field: { x: 1.0 } }),
    chunk('gpt-4o-2024-11-20', { content: 'lo' }),
    { ...chunk('gpt-4o-2024-11-20', {}), choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  ];
  const { gateway, upstream } = await withStream(t, (res) => {
    startEventStream(res);
    res.end(sseBody(events));
  });
  const response = await gateway.post(ask);
  t.equal(response.status, 200);
  t.match(response.headers.get('content-type'), /^text\/event-stream/);
  t.equal(response.headers.get('cache-control'), 'no-cache');
  t.equal(response.headers.get('x-accel-buffering'), 'no');
  t.notOk(response.headers.get('content-encoding'));
  const data = await readDataEvents(response);
  t.equal(data.length, events.length + 1);
  t.equal(data.at(-1), '[DONE]');
  data.slice(0, -1).forEach((event, i) => {
    t.equal(event, JSON.stringify({ ...events[i], model: 'mock/gpt-4o' }), `event ${i} is unchanged but for model`);
  });
  t.match(JSON.parse(upstream.requests[0]!.body), { model: 'gpt-4o-2024-11-20', stream: true });
});

t.test('the head goes out with the first event: a provider that sent only its own head has committed nothing yet', async (t) => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const { gateway } = await withStream(t, async (res) => {
    startEventStream(res);
    await released;
    res.end(sseBody([chunk('gpt-4o-2024-11-20', { content: 'late' })]));
  });
  // fetch resolves on the head: until the first event, the gateway may still fail over, so it sends nothing.
  let headArrived = false;
  const pending = gateway.post(ask).then((response) => ((headArrived = true), response));
  await sleep(300);
  t.notOk(headArrived, 'no head before the first event');
  release();
  const response = await pending;
  t.equal(response.status, 200);
  t.match(response.headers.get('content-type'), /^text\/event-stream/);
  const data = await readDataEvents(response);
  t.same(data.map((event) => (event === '[DONE]' ? event : (JSON.parse(event) as { choices: { delta: { content: string } }[] }).choices[0]!.delta.content)), ['late', '[DONE]']);
});

t.test('events split at every few bytes, with CRLF, comments and multi-byte characters, arrive whole', async (t) => {
  const texts = ['Héllo ', '👋🏽 ', '世界', ' ', 'ok'];
  const body =
    ': OPENROUTER PROCESSING\r\n\r\n' + sseBody(texts.map((text) => chunk('gpt-4o-2024-11-20', { content: text })), { eol: '\r\n' });
  const { gateway } = await withStream(t, async (res) => {
    startEventStream(res);
    await writeInPieces(res, bytePieces(body, 3), 1);
    res.end();
  });
  const response = await gateway.post(ask);
  const raw = await response.text();
  t.match(raw, /^data: /, 'a comment before the first event carries nothing: held back, it breaks nothing');
  const events = raw.split('\n\n').filter((frame) => frame.startsWith('data: ')).map((frame) => frame.slice(6));
  t.equal(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1).map((event) => JSON.parse(event) as { model: string; choices: { delta: { content: string } }[] });
  t.ok(chunks.every((c) => c.model === 'mock/gpt-4o'));
  t.equal(chunks.map((c) => c.choices[0]!.delta.content).join(''), texts.join(''));
});

t.test('a whole CRLF stream in one read (comment first, first event cut from the rest) arrives whole and in order', async (t) => {
  const texts = Array.from({ length: 300 }, (_, i) => `tok${i} ü `);
  const body = ': keep-alive\r\n\r\n' + sseBody(texts.map((text) => chunk('gpt-4o-2024-11-20', { content: text })), { eol: '\r\n' });
  const { gateway } = await withStream(t, (res) => {
    startEventStream(res);
    res.end(body);
  });
  const raw = await (await gateway.post(ask)).text();
  t.match(raw, /^data: /, 'the keep-alive before the first event is held back');
  const events = raw.split('\n\n').filter((frame) => frame.startsWith('data: ')).map((frame) => frame.slice(6));
  t.equal(events.length, texts.length + 1);
  t.equal(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1).map((event) => JSON.parse(event) as { model: string; choices: { delta: { content: string } }[] });
  t.ok(chunks.every((c) => c.model === 'mock/gpt-4o'));
  t.same(
    chunks.map((c) => c.choices[0]!.delta.content),
    texts,
  );
});

t.test('a multi-line data field stays one event', async (t) => {
  const { gateway } = await withStream(t, (res) => {
    startEventStream(res);
    res.end('data: {"id":"x",\ndata: "model":"gpt-4o-2024-11-20","choices":[]}\n\ndata: [DONE]\n\n');
  });
  const data = await readDataEvents(await gateway.post(ask));
  t.same(JSON.parse(data[0]!), { id: 'x', model: 'mock/gpt-4o', choices: [] });
});

t.test('a provider error event mid-stream becomes exactly the envelope, then the stream ends without [DONE]', async (t) => {
  const { gateway } = await withStream(t, (res) => {
    startEventStream(res);
    res.write(sseBody([chunk('anthropic/claude-sonnet-4.5', { content: 'partial' })], { done: false }));
    res.write(
      sseBody(
        [{ id: 'gen-1', object: 'chat.completion.chunk', model: 'anthropic/claude-sonnet-4.5', error: { code: 502, message: 'Provider disconnected' }, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }] }],
        { done: false },
      ),
    );
    res.end('data: [DONE]\n\n');
  });
  const data = await readDataEvents(await gateway.post({ ...ask, model: 'mock/anthropic/claude-sonnet-4.5' }));
  t.equal(data.length, 2, 'the partial chunk and the error; no [DONE]');
  t.same(JSON.parse(data[1]!), {
    error: {
      message: 'Provider disconnected',
      type: 'server_error',
      code: 'provider_stream_error',
      param: null,
      origin: 'gateway',
      gateway_code: 'provider_stream_error',
      provider: 'mock',
      provider_status: null,
      provider_code: '502',
    },
  });
});

t.test('an error event with the provider type and code keeps them', async (t) => {
  const { gateway } = await withStream(t, (res) => {
    startEventStream(res);
    res.end(sseBody([chunk('gpt-4o-2024-11-20', { content: 'partial' }), { error: { message: 'Overloaded', type: 'overloaded_error', code: 'overloaded' } }]));
  });
  const data = await readDataEvents(await gateway.post(ask));
  t.match(JSON.parse(data[1]!), { error: { type: 'overloaded_error', code: 'overloaded', provider_code: 'overloaded', message: 'Overloaded' } });
  t.equal(data.length, 2);
});

t.test('an error event before any other is answered as the HTTP error it stands for, not as a stream', async (t) => {
  const { gateway } = await withStream(t, (res) => {
    startEventStream(res);
    res.end(sseBody([{ error: { message: 'Overloaded', type: 'overloaded_error', code: 'overloaded' } }]));
  });
  const response = await gateway.post(ask);
  t.equal(response.status, 502);
  t.match(response.headers.get('content-type'), /^application\/json/);
  t.match(await envelopeOf(response), { message: 'Overloaded', provider_code: 'overloaded', provider_status: 500, gateway_code: 'provider_error' });
});

for (const [name, fault, gatewayCode] of [
  ['a reset mid-stream', (res: ServerResponse) => res.socket?.destroy(), 'upstream_stream_interrupted'],
  ['a close without [DONE]', (res: ServerResponse) => res.end(), 'upstream_stream_interrupted'],
] as const) {
  t.test(`${name} ends the stream with one final error event`, async (t) => {
    const { gateway } = await withStream(t, async (res) => {
      startEventStream(res);
      res.write(sseBody([chunk('gpt-4o-2024-11-20', { content: 'partial' })], { done: false }));
      await sleep(20);
      fault(res);
    });
    const data = await readDataEvents(await gateway.post(ask));
    t.equal(data.length, 2);
    t.match(JSON.parse(data[1]!), { error: { gateway_code: gatewayCode, origin: 'gateway', provider: 'mock', type: 'server_error' } });
  });
}

t.test('a provider silent past stream_idle_timeout_ms ends the stream with upstream_stream_timeout', async (t) => {
  const { gateway } = await withStream(t, (res) => {
    startEventStream(res);
    res.write(sseBody([chunk('model', { content: 'thinking…' })], { done: false }));
    // and then silence
  });
  const started = Date.now();
  const data = await readDataEvents(await gateway.post({ ...ask, model: 'slow/model' }));
  t.equal(data.length, 2);
  t.match(JSON.parse(data[1]!), { error: { gateway_code: 'upstream_stream_timeout', provider: 'slow', message: /300 ms/ } });
  t.ok(Date.now() - started < 3000);
});

t.test('errors before the stream starts are JSON envelopes with the mapped status', async (t) => {
  const { gateway } = await withStream(t, (res) => sendJson(res, 429, { error: { message: 'slow down', code: 'rate_limit_exceeded' } }, { 'retry-after': '3' }));
  const response = await gateway.post(ask);
  t.equal(response.status, 429);
  t.match(response.headers.get('content-type'), /^application\/json/);
  t.equal(response.headers.get('retry-after'), '3');
  t.match(await envelopeOf(response), { gateway_code: 'provider_rate_limited', provider_status: 429 });

  const miss = await gateway.post({ ...ask, model: 'mock/unknown' });
  t.equal(miss.status, 400);
  t.match(miss.headers.get('content-type'), /^application\/json/);
});

t.test('a 200 that is not an event stream is 502 invalid_upstream_response before any event', async (t) => {
  const { gateway } = await withStream(t, (res) => sendJson(res, 200, { id: 'x', object: 'chat.completion', choices: [] }));
  const response = await gateway.post(ask);
  t.equal(response.status, 502);
  t.match(await envelopeOf(response), { gateway_code: 'invalid_upstream_response' });
});

t.test('the caller going away stops the endless upstream request once the usage tail is over', async (t) => {
  let upstreamClosedAt = 0;
  const { gateway } = await withStream(t, (res) => {
    startEventStream(res);
    res.on('close', () => (upstreamClosedAt = Date.now()));
    const timer = setInterval(() => res.write(sseBody([chunk('m', { content: 'x' })], { done: false })), 10);
    res.on('close', () => clearInterval(timer));
  });
  const controller = new AbortController();
  const streaming = await fetch(`${gateway.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...ask, model: 'keyless/llama3.2' }),
    signal: controller.signal,
  });
  const reader = streaming.body!.getReader();
  await reader.read();
  upstreamClosedAt = 0;
  const abortedAt = Date.now();
  controller.abort();
  // The provider is read for its usage for USAGE_TAIL_MS after the caller left (README: Callers), then let go:
  // generous bounds for a loaded 2-core machine.
  const deadline = abortedAt + USAGE_TAIL_MS + 5000;
  while (upstreamClosedAt === 0 && Date.now() < deadline) await sleep(5);
  t.ok(upstreamClosedAt > 0, 'the provider saw its connection close');
  t.ok(upstreamClosedAt - abortedAt <= USAGE_TAIL_MS + 2000, `closed ${upstreamClosedAt - abortedAt} ms after the caller left`);
});

t.test('a slow caller makes the gateway stop reading (backpressure), and that pause is not idleness', async (t) => {
  const LIMIT = 40_000_000;
  let written = 0;
  const event = sseBody([chunk('model', { content: 'x'.repeat(1000) })], { done: false });
  // The slow provider's idle limit raised to 2 s, so a loaded machine's own pauses stay well inside it.
  const routes = GATEWAY_ROUTES.replace('stream_idle_timeout_ms: 300', 'stream_idle_timeout_ms: 2000');
  const { gateway } = await withStream(t, async (res) => {
    startEventStream(res);
    // Write up to 40 MB, noting when the gateway first stops taking data; finish once it drains.
    while (written < LIMIT) {
      written += event.length;
      if (!res.write(event)) {
        await new Promise((resolve) => res.once('drain', resolve));
      }
    }
    res.end('data: [DONE]\n\n');
  }, routes);
  // The slow provider has a 2 s idle limit; the caller takes nothing for 6 s.
  const events = await new Promise<{ count: number; last: string }>((resolve, reject) => {
    const req = request(`${gateway.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      res.pause();
      setTimeout(() => {
        // Loopback socket buffers hold a few MB each way; without backpressure all 40 MB would be taken.
        t.ok(written < LIMIT / 2, `the provider could send only ${written} bytes while the caller read nothing`);
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (piece: string) => (text += piece));
        res.on('end', () => {
          const frames = text.split('\n\n').filter(Boolean);
          resolve({ count: frames.length, last: frames.at(-1) ?? '' });
        });
        res.resume();
      }, 6000);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ ...ask, model: 'slow/model' }));
  });
  t.equal(events.last.slice(0, 300), 'data: [DONE]', 'the stream completed: pausing for a slow caller is not an idle provider');
  t.ok(events.count > 1000);
});

t.test('a drain past its grace while the gateway waits for a slow caller: the caller, reading late, gets every event taken, then shutting_down', async (t) => {
  const event = sseBody([chunk('model', { content: 'y'.repeat(1000) })], { done: false });
  let providerBlocked!: () => void;
  const blocked = new Promise<void>((resolve) => (providerBlocked = resolve));
  const { gateway } = await withStream(t, async (res) => {
    startEventStream(res);
    // Write until the gateway stops taking data: it waits for the caller, who reads nothing.
    for (let written = 0; written < 40_000_000 && !res.destroyed; written += event.length) {
      if (res.write(event)) continue;
      providerBlocked();
      await drained(res);
    }
  });
  const text = await new Promise<string>((resolve, reject) => {
    const req = request(`${gateway.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'slow-drain' } }, (res) => {
      res.pause();
      void blocked
        .then(() => gateway.drain(100))
        .then(({ forcedStops }) => {
          t.equal(forcedStops, 1, 'the drain stopped the stream');
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (piece: string) => (body += piece));
          res.on('end', () => resolve(body));
          res.resume();
        });
    });
    req.on('error', reject);
    req.end(JSON.stringify(ask));
  });
  const frames = text.split('\n\n').filter(Boolean);
  t.ok(frames.length > 1, `${frames.length} frames`);
  t.ok(frames.slice(0, -1).every((frame) => frame.startsWith('data: {"id"') && frame.includes('"content":"yyy')), 'every frame before the last is a whole content event');
  t.match(JSON.parse(frames.at(-1)!.slice('data: '.length)), { error: { gateway_code: 'shutting_down', provider: 'mock' } });
  t.match(await gateway.requestLog('slow-drain'), { gateway_code: 'shutting_down', status: 200 });
  t.same(gateway.tracked(), { inFlight: 0, stopHooks: 0 }, 'the gateway tracks nothing');
});

/** A provider that streams as OpenAI does with include_usage: usage null on every chunk, then a usage-only chunk. */
function usageAwareProvider(res: ServerResponse, body: string) {
  const request = JSON.parse(body) as { stream_options?: { include_usage?: boolean } };
  const withUsage = request.stream_options?.include_usage === true;
  const extra = withUsage ? { usage: null } : {};
  const events: unknown[] = [chunk('gpt-4o-2024-11-20', { content: 'Hi' }, extra), chunk('gpt-4o-2024-11-20', { content: '!' }, extra)];
  if (withUsage) events.push({ ...chunk('gpt-4o-2024-11-20', {}), choices: [], usage: { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 } });
  startEventStream(res);
  res.end(sseBody(events));
}

t.test('the gateway asks for usage; a caller that did not ask sees exactly what it would have seen', async (t) => {
  const { gateway, upstream } = await withStream(t, usageAwareProvider);
  const data = await readDataEvents(await gateway.post({ ...ask, stream_options: { include_obfuscation: false } }, { 'x-request-id': 'usage-1' }));
  t.same(JSON.parse(upstream.requests[0]!.body).stream_options, { include_obfuscation: false, include_usage: true }, 'asked upstream, the caller’s other options kept');
  t.equal(data.length, 3, 'two chunks and [DONE]: no usage-only chunk');
  for (const event of data.slice(0, 2)) t.notOk('usage' in (JSON.parse(event) as object), 'no usage field added');
  t.same(JSON.parse(data[0]!), { ...chunk('gpt-4o-2024-11-20', { content: 'Hi' }), model: 'mock/gpt-4o' });
  t.match(await gateway.requestLog('usage-1'), { prompt_tokens: 8, completion_tokens: 2 }, 'and the gateway counted the tokens');
});

t.test('a caller that asked for usage gets the provider’s usage chunk unchanged', async (t) => {
  const { gateway, upstream } = await withStream(t, usageAwareProvider);
  const data = await readDataEvents(await gateway.post({ ...ask, stream_options: { include_usage: true } }));
  t.equal(upstream.requests[0]!.body, JSON.stringify({ ...ask, model: 'gpt-4o-2024-11-20', stream_options: { include_usage: true } }), 'the request went up untouched but for model');
  t.equal(data.length, 4);
  t.match(JSON.parse(data[0]!), { usage: null });
  t.match(JSON.parse(data[2]!), { choices: [], usage: { prompt_tokens: 8 }, model: 'mock/gpt-4o' });
});

t.test('stream_usage: false leaves the caller’s stream_options alone', async (t) => {
  const { gateway, upstream } = await withStream(t, usageAwareProvider);
  await (await gateway.post({ ...ask, model: 'nousage/model' })).text();
  t.equal(upstream.requests[0]!.body, JSON.stringify({ ...ask, model: 'model' }));
});

t.test('a byte-order mark opening the provider’s stream is ignored, so the first event arrives', async (t) => {
  const events = [chunk('gpt-4o-2024-11-20', { content: 'first' }), chunk('gpt-4o-2024-11-20', { content: 'second' })];
  const { gateway } = await withStream(t, async (res) => {
    startEventStream(res);
    // The mark split across two reads, as a provider's first write may cut it.
    await writeInPieces(res, [Buffer.from([0xef, 0xbb]), Buffer.concat([Buffer.from([0xbf]), Buffer.from(sseBody(events))])]);
    res.end();
  });
  const data = await readDataEvents(await gateway.post(ask));
  t.same(data, [...events.map((event) => JSON.stringify({ ...event, model: 'mock/gpt-4o' })), '[DONE]']);
});

t.test('escaped keys, "error": null and keys JSON cannot decode: the caller reads the contract (issue 10, items 5, 7, 8)', async (t) => {
  const events = [
    '{"id":"a","object":"chat.completion.chunk","model":"gpt-4o-2024-11-20","mod\\u0065l":"gpt-4o-2024-11-20","choices":[{"index":0,"delta":{"content":"Hi"}}],"usage":null}',
    '{"id":"a","model":"gpt-4o-2024-11-20","error":null,"choices":[{"index":0,"delta":{"content":"!"}}],"usage":null}',
    '{"\\x":1,"usage":{}}',
    '{"id":"a","model":"gpt-4o-2024-11-20","choices":[],"us\\u0061ge":{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10}}',
  ];
  const { gateway } = await withStream(t, (res) => {
    startEventStream(res);
    res.end(sseBody(events));
  });
  const data = await readDataEvents(await gateway.post(ask, { 'x-request-id': 'escaped-keys' }));
  t.same(data, [
    '{"id":"a","object":"chat.completion.chunk","model":"mock/gpt-4o","mod\\u0065l":"mock/gpt-4o","choices":[{"index":0,"delta":{"content":"Hi"}}]}',
    '{"id":"a","model":"mock/gpt-4o","error":null,"choices":[{"index":0,"delta":{"content":"!"}}]}',
    '{"\\x":1,"usage":{}}',
    '[DONE]',
  ]);
  t.equal(JSON.parse(data[0]!).model, 'mock/gpt-4o', 'a JSON parser reads the routing model');
  t.match(await gateway.requestLog('escaped-keys'), { gateway_code: null, prompt_tokens: 8, completion_tokens: 2 }, 'the escaped usage was counted, and hidden');
});

t.test('an escaped "error" key mid-stream is an error event', async (t) => {
  const { gateway } = await withStream(t, (res) => {
    startEventStream(res);
    res.write(sseBody([chunk('gpt-4o-2024-11-20', { content: 'partial' })], { done: false }));
    res.end(sseBody(['{"model":"gpt-4o-2024-11-20","\\u0065rror":{"message":"Provider disconnected","code":502}}']));
  });
  const data = await readDataEvents(await gateway.post(ask));
  t.equal(data.length, 2, 'the partial chunk and the error; no [DONE]');
  t.match(JSON.parse(data[1]!), { error: { message: 'Provider disconnected', gateway_code: 'provider_stream_error', provider_code: '502' } });
});

t.test('stream_options reaches the provider as written, but for include_usage, however deep (issue 10, item 10)', async (t) => {
  const { gateway, upstream } = await withStream(t, usageAwareProvider);
  const head = '{"model":"mock/gpt-4o","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":';
  const sent = `${head}{"include_usage":false, "x":{"b":1.0,"a":12345678901234567890}}}`;
  t.equal((await gateway.post(sent)).status, 200);
  t.equal(upstream.requests[0]!.body, sent.replace('mock/gpt-4o', 'gpt-4o-2024-11-20').replace('false', 'true'), 'numbers, order and spacing as sent');
  const deep = `${head}{"x":${'['.repeat(20_000)}1.0${']'.repeat(20_000)}}}`;
  const response = await gateway.post(deep);
  await response.text();
  // Never a 500. Should a bound on nesting (issue 10, item 2) refuse this body, it must be the caller's 4xx envelope.
  if (response.status === 200) t.equal(upstream.requests[1]!.body, deep.replace('mock/gpt-4o', 'gpt-4o-2024-11-20').replace('{"x"', '{"include_usage":true,"x"'), '20,000 deep, byte for byte');
  else t.ok(response.status >= 400 && response.status < 500 && /json/.test(response.headers.get('content-type') ?? ''), `refused as the caller’s error (${response.status})`);
});

t.test('an event over the limit partway through a read: the events before it in that read still reach the caller, then the error', async (t) => {
  const { gateway } = await withStream(t, (res) => {
    startEventStream(res);
    res.write(sseBody([chunk('gpt-4o', { role: 'assistant', content: '' })], { done: false }));
    // One write: three small events, then one far over max_upstream_body_bytes (16 KiB here).
    setTimeout(() => res.end(sseBody([1, 2, 3].map((n) => chunk('gpt-4o', { content: `part ${n} ` })), { done: false }) + `data: ${'x'.repeat(200_000)}\n\n`), 50);
  }, GATEWAY_ROUTES, { maxUpstreamBodyBytes: 16 * 1024 });
  const data = await readDataEvents(await gateway.post(ask));
  const contents = data.slice(0, -1).map((event) => (JSON.parse(event) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content);
  t.same(contents, ['', 'part 1 ', 'part 2 ', 'part 3 '], 'every event before the one over the limit');
  t.match(JSON.parse(data.at(-1)!), { error: { gateway_code: 'invalid_upstream_response', provider: 'mock' } });
});
