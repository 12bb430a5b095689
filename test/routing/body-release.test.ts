// Issue 25, item 8: a stream whose answer has started gives its body's MAX_BODY_BYTES_IN_FLIGHT charge back, so open
// streams with real prompts are bounded by memory, not by the body budget; before the commit the body stays
// charged (and there for failover).
import type { ServerResponse } from 'node:http';
import t, { type Test } from 'tap';
import { envelopeOf, PROVIDER_KEY, startGateway } from '../helpers/gateway.js';
import { failoverRoutes, KEYS, switchable, type Behaviour } from '../helpers/failover-setup.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';

const PAD = 60_000;
/** Three bodies of ~60 KB fit, a fourth does not. */
const BUDGET = 200_000;
const prompt = (n: number) => JSON.stringify({ model: 'pool/main', stream: true, messages: [{ role: 'user', content: `${n} ${'y'.repeat(PAD)}` }] });

async function startBudgetedGateway(t: Test) {
  const [a, b] = await Promise.all([switchable(t), switchable(t)]);
  const gateway = await startGateway({
    routes: failoverRoutes(),
    env: { A_URL: `${a.origin}/v1`, A_KEY: KEYS.a, B_URL: `${b.origin}/v1`, B_KEY: KEYS.b, MOCK_API_KEY: PROVIDER_KEY },
    maxBodyBytes: 100_000,
    maxBodyBytesInFlight: BUDGET,
  });
  t.teardown(() => gateway.close());
  return { a, b, post: (body: string) => gateway.post(body) };
}

/** Answers each call with a stream's first event and keeps it open; `held` has every response so far. */
function openStreams(held: ServerResponse[]): Behaviour {
  return (_request, res) => {
    startEventStream(res);
    res.write(sseBody([chunk('main-upstream', { role: 'assistant', content: 'first' })], { done: false }));
    held.push(res);
  };
}

const holdSilently =
  (held: ServerResponse[]): Behaviour =>
  (_request, res) =>
    void held.push(res);

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

t.test('open streams whose answers have started are not limited by the body budget; a request awaiting its provider still is', async (t) => {
  const { a, b, post } = await startBudgetedGateway(t);
  const streams: ServerResponse[] = [];
  a.behave = b.behave = openStreams(streams);
  const opened: Response[] = [];
  // Ten bodies of ~60 KB: three times the budget, all open at once.
  for (let n = 0; n < 10; n++) {
    const response = await post(prompt(n));
    t.equal(response.status, 200, `stream ${n} served`);
    opened.push(response);
  }
  t.equal(streams.length, 10);
  t.equal(a.requests.length + b.requests.length, 10, 'every body reached a provider');
  t.ok([...a.requests, ...b.requests].every((request) => request.body.includes('y'.repeat(PAD))), 'each whole');

  // Before its answer starts, a body keeps its charge: three wait for their provider, a fourth does not fit.
  const waiting: ServerResponse[] = [];
  a.behave = b.behave = holdSilently(waiting);
  const held = [post(prompt(10)), post(prompt(11)), post(prompt(12))];
  await until(() => waiting.length === 3);
  const refused = await post(prompt(13));
  t.equal(refused.status, 503);
  t.match(await envelopeOf(refused), { gateway_code: 'overloaded' });
  t.equal(a.requests.length + b.requests.length, 13, 'the refused body never reached a provider');

  for (const res of waiting) {
    startEventStream(res);
    res.end(sseBody([chunk('main-upstream', { content: 'late' })]));
  }
  for (const response of await Promise.all(held)) {
    t.equal(response.status, 200);
    t.match(await response.text(), /late/);
  }
  for (const res of streams) res.end(sseBody([chunk('main-upstream', { content: ' and last' })]));
  for (const response of opened) t.match(await response.text(), /first[\s\S]* and last[\s\S]*\[DONE\]/);
});

t.test('before the commit the body is still there: a stream cut before its first event fails over with the whole body', async (t) => {
  const { a, b, post } = await startBudgetedGateway(t);
  let calls = 0;
  const cutThenStream: Behaviour = (_request, res) => {
    calls++;
    startEventStream(res);
    if (calls === 1) {
      // 200 and headers, then the connection breaks before any event: the attempt fails, nothing reached the caller.
      setTimeout(() => res.destroy(), 20);
      return;
    }
    res.end(sseBody([chunk('main-upstream', { role: 'assistant', content: 'from the second endpoint' })]));
  };
  a.behave = b.behave = cutThenStream;
  const response = await post(prompt(1));
  t.equal(response.status, 200);
  t.match(await response.text(), /from the second endpoint/);
  const sent = [...a.requests, ...b.requests];
  t.equal(sent.length, 2, 'one attempt at each endpoint');
  t.ok(sent.every((request) => request.body.includes(`1 ${'y'.repeat(PAD)}`)), 'the second endpoint got the same whole body');
  t.equal(sent[0]!.body, sent[1]!.body);

  // Answered, the budget is whole again: three more bodies are held at once.
  const waiting: ServerResponse[] = [];
  a.behave = b.behave = holdSilently(waiting);
  const held = [post(prompt(2)), post(prompt(3)), post(prompt(4))];
  await until(() => waiting.length === 3);
  for (const res of waiting) {
    startEventStream(res);
    res.end(sseBody([chunk('main-upstream', { content: 'ok' })]));
  }
  for (const answer of await Promise.all(held)) t.equal(answer.status, 200);
});
