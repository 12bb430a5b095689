// Every request settles, whatever phase its provider is in when the caller leaves or a drain runs out of
// grace: its log line is written, the provider's request is closed, and the gateway tracks nothing after.
import { request, type IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startMockUpstream } from '../helpers/mock-upstream.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';

/** Where the provider stops and says nothing more. */
const PHASES = {
  'before upstream headers': { stream: false },
  'while reading a non-streamed body': { stream: false },
  'stream before upstream headers': { stream: true },
  'stream before its first event': { stream: true },
  'mid-stream': { stream: true },
} as const;
type Phase = keyof typeof PHASES;

interface Exchange {
  /** The provider has reached its phase. */
  readonly reached: Promise<void>;
  /** The provider's request closed (the gateway let it go). */
  closed: boolean;
}

/** A provider that, per request (x-request-id), goes as far as the phase the caller named in metadata, then stalls. */
async function stallingProvider(t: Test) {
  const exchanges = new Map<string, { exchange: Exchange; reached: () => void }>();
  const exchangeOf = (id: string) => {
    let entry = exchanges.get(id);
    if (!entry) {
      let reached = () => {};
      entry = { exchange: { reached: new Promise<void>((resolve) => (reached = resolve)), closed: false }, reached };
      exchanges.set(id, entry);
    }
    return entry;
  };
  const upstream = await startMockUpstream((req, res) => {
    const entry = exchangeOf(String(req.headers['x-request-id']));
    res.once('close', () => (entry.exchange.closed = true));
    const { phase, then } = (JSON.parse(req.body) as { metadata: { phase: Phase; then?: 'reset' } }).metadata;
    // A provider that goes away in its phase, rather than stall there.
    if (then === 'reset') setTimeout(() => res.socket?.destroy(), 50);
    if (phase === 'while reading a non-streamed body') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 });
      res.write('{"id":"chatcmpl-half","object":"chat.completion",');
    } else if (phase === 'stream before its first event') {
      startEventStream(res);
    } else if (phase === 'mid-stream') {
      startEventStream(res);
      res.write(sseBody([chunk('llama3.2', { role: 'assistant', content: 'Hel' })], { done: false }));
    }
    entry.reached();
  });
  t.teardown(() => upstream.close());
  return { upstream, exchange: (id: string) => exchangeOf(id).exchange };
}

interface Answer {
  status: number | null;
  headers: IncomingHttpHeaders | null;
  body: string;
}

/** One caller: `headers` resolves with the gateway's response head, `answer` when the response ends or breaks. */
function ask(gateway: RunningGateway, id: string, phase: Phase, options: { model?: string; then?: 'reset' } = {}) {
  const body = JSON.stringify({
    model: options.model ?? 'keyless/llama3.2',
    messages: [{ role: 'user', content: 'hi' }],
    stream: PHASES[phase].stream,
    metadata: { phase, then: options.then },
  });
  const answer: Answer = { status: null, headers: null, body: '' };
  const req = request(`${gateway.origin}/v1/chat/completions`, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'x-request-id': id },
  });
  let firstBytes = () => {};
  const firstData = new Promise<void>((resolve) => (firstBytes = resolve));
  const done = new Promise<Answer>((resolve) => {
    req.on('error', () => resolve(answer));
    req.on('response', (res) => {
      answer.status = res.statusCode ?? null;
      answer.headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (piece: string) => {
        answer.body += piece;
        firstBytes();
      });
      res.on('error', () => {});
      res.on('close', () => resolve(answer));
    });
  });
  req.end(body);
  return { req, firstData, done };
}

/** Waits (up to 5 s) for `check` to hold; returns whether it did. */
async function until(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 500; i++) {
    if (check()) return true;
    await sleep(10);
  }
  return check();
}

const logsOf = (gateway: RunningGateway, id: string) => gateway.requestLogs().filter((line) => line['request_id'] === id);

/** The caller is in `phase`: the provider got there, and the gateway has relayed what it says it relays by then. */
async function inPhase(provider: Awaited<ReturnType<typeof stallingProvider>>, caller: ReturnType<typeof ask>, id: string, phase: Phase) {
  await provider.exchange(id).reached;
  if (phase === 'mid-stream') await caller.firstData;
  // (A stream sends the caller nothing before its first event, its head included.)
  else await sleep(100); // the gateway reads what the provider wrote (headers, half a body) and waits for more
}

for (const phase of Object.keys(PHASES) as Phase[]) {
  t.test(`a caller that hangs up ${phase}: the request settles and nothing stays tracked`, async (t) => {
    const provider = await stallingProvider(t);
    const gateway = await startGateway({ upstreamOrigin: provider.upstream.origin });
    t.teardown(() => gateway.close());
    const id = `hangup-${phase.replaceAll(' ', '-')}`;
    const caller = ask(gateway, id, phase);
    await inPhase(provider, caller, id, phase);
    caller.req.destroy();

    t.ok(await until(() => provider.exchange(id).closed), "the provider's request was closed");
    t.ok(await until(() => logsOf(gateway, id).length === 1), 'one log line');
    t.match(logsOf(gateway, id)[0], { completed: false });
    await until(() => gateway.tracked().stopHooks === 0 && gateway.tracked().inFlight === 0);
    t.same(gateway.tracked(), { inFlight: 0, stopHooks: 0 }, 'the gateway tracks nothing');
  });
}

t.test('many callers hanging up in every phase leave nothing tracked', async (t) => {
  const provider = await stallingProvider(t);
  const gateway = await startGateway({ upstreamOrigin: provider.upstream.origin });
  t.teardown(() => gateway.close());
  const ids: string[] = [];
  for (let round = 0; round < 10; round++) {
    await Promise.all(
      (Object.keys(PHASES) as Phase[]).map(async (phase, i) => {
        const id = `many-${round}-${i}`;
        ids.push(id);
        const caller = ask(gateway, id, phase);
        await inPhase(provider, caller, id, phase);
        caller.req.destroy();
        await caller.done;
      }),
    );
  }
  await until(() => gateway.tracked().stopHooks === 0 && gateway.tracked().inFlight === 0);
  t.same(gateway.tracked(), { inFlight: 0, stopHooks: 0 }, `${ids.length} abandoned requests, none still tracked`);
  t.ok(await until(() => ids.every((id) => logsOf(gateway, id).length === 1)), 'one log line each');
  t.ok(await until(() => ids.every((id) => provider.exchange(id).closed)), 'every provider request was closed');
});

t.test('a drain past its grace answers every phase shutting_down (503 or the final event), with one log line each', async (t) => {
  const provider = await stallingProvider(t);
  const gateway = await startGateway({ upstreamOrigin: provider.upstream.origin });
  t.teardown(() => gateway.close());
  const phases = Object.keys(PHASES) as Phase[];
  const callers = await Promise.all(
    phases.map(async (phase, i) => {
      const id = `drain-${i}`;
      const caller = ask(gateway, id, phase);
      await inPhase(provider, caller, id, phase);
      return { phase, id, caller };
    }),
  );
  t.same(await gateway.drain(100), { forcedStops: phases.length });
  // What server.ts does once the drain is over: whatever is still open is cut.
  await gateway.close();

  for (const { phase, id, caller } of callers) {
    const answer = await caller.done;
    // A stream commits with its first event: before it, the caller is answered like any other.
    if (phase === 'mid-stream') {
      t.equal(answer.status, 200, `${phase}: the stream had begun`);
      const last = answer.body.trim().split('\n\n').at(-1) ?? '';
      t.match(JSON.parse(last.replace(/^data: /, '')), { error: { gateway_code: 'shutting_down', provider: 'keyless', origin: 'gateway' } }, `${phase}: final event`);
    } else {
      t.equal(answer.status, 503, `${phase}: 503`);
      t.equal(answer.headers?.['x-should-retry'], 'true', `${phase}: x-should-retry`);
      t.match(JSON.parse(answer.body || '{}'), { error: { gateway_code: 'shutting_down', code: 'shutting_down', provider: 'keyless', origin: 'gateway' } }, `${phase}: envelope`);
    }
    t.equal(logsOf(gateway, id).length, 1, `${phase}: one log line`);
    t.match(logsOf(gateway, id)[0], { gateway_code: 'shutting_down', provider: 'keyless' }, `${phase}: logged as shutting_down`);
  }
  t.ok(await until(() => callers.every(({ id }) => provider.exchange(id).closed)), 'every provider request was closed');
  t.same(gateway.tracked(), { inFlight: 0, stopHooks: 0 }, 'the gateway tracks nothing');
});

t.test('a drain past its grace answers a caller still sending its body 503 shutting_down, and closes its connection', async (t) => {
  const provider = await stallingProvider(t);
  const gateway = await startGateway({ upstreamOrigin: provider.upstream.origin });
  t.teardown(() => gateway.close());
  const answer: Answer = { status: null, headers: null, body: '' };
  const req = request(`${gateway.origin}/v1/chat/completions`, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': 1000, 'x-request-id': 'drain-uploading' },
  });
  const done = new Promise<void>((resolve) => {
    req.on('error', () => resolve());
    req.on('response', (res) => {
      answer.status = res.statusCode ?? null;
      answer.headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (piece: string) => (answer.body += piece));
      res.on('error', () => {});
      res.on('close', () => resolve());
    });
  });
  req.write('{"model":"keyless/llama3.2","messages":[');
  await until(() => gateway.tracked().inFlight === 1);
  t.same(await gateway.drain(100), { forcedStops: 1 });
  await gateway.close();
  await done;
  t.equal(answer.status, 503);
  t.equal(answer.headers?.['x-should-retry'], 'true');
  t.equal(answer.headers?.['connection'], 'close');
  t.match(JSON.parse(answer.body || '{}'), { error: { gateway_code: 'shutting_down', origin: 'gateway', provider: null } });
  t.equal(logsOf(gateway, 'drain-uploading').length, 1, 'one log line');
  t.match(logsOf(gateway, 'drain-uploading')[0], { gateway_code: 'shutting_down', status: 503 });
  t.equal(provider.upstream.requests.length, 0, 'nothing was sent to the provider');
  t.ok(await until(() => gateway.tracked().stopHooks === 0 && gateway.tracked().inFlight === 0), 'the gateway tracks nothing');
});

t.test('a provider that goes away, or times out, in any phase: every request is answered and settles', async (t) => {
  const provider = await stallingProvider(t);
  const gateway = await startGateway({ upstreamOrigin: provider.upstream.origin });
  t.teardown(() => gateway.close());
  const cases = (Object.keys(PHASES) as Phase[]).flatMap((phase) => [
    { phase, how: 'provider gone', options: { then: 'reset' as const } },
    // slow/model: timeout_ms and stream_idle_timeout_ms of 300 ms.
    { phase, how: 'timeout', options: { model: 'slow/model' } },
  ]);
  const answers = await Promise.all(cases.map(({ phase, how, options }, i) => ask(gateway, `gone-${i}`, phase, options).done.then((answer) => ({ phase, how, answer }))));
  for (const [i, { phase, how, answer }] of answers.entries()) {
    const stream = phase === 'stream before its first event' || phase === 'mid-stream';
    const expected = stream
      ? how === 'timeout' ? 'upstream_stream_timeout' : 'upstream_stream_interrupted'
      : how === 'timeout' ? 'upstream_timeout' : 'upstream_unreachable';
    const last = stream ? (answer.body.trim().split('\n\n').at(-1) ?? '').replace(/^data: /, '') : answer.body;
    t.match(JSON.parse(last || '{}'), { error: { gateway_code: expected } }, `${phase}, ${how}: ${expected}`);
    t.equal(logsOf(gateway, `gone-${i}`).length, 1, `${phase}, ${how}: one log line`);
  }
  t.ok(await until(() => gateway.tracked().stopHooks === 0 && gateway.tracked().inFlight === 0), 'the gateway tracks nothing');
});
