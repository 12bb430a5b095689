import OpenAI from 'openai';
import t from 'tap';
import { completionBody, sendJson } from '../helpers/mock-upstream.js';
import { KEYS, ask, failing, refusedOrigin, startRig } from '../helpers/failover-setup.js';

// pool/main: endpoints a (weight 1) and b (weight 3), then backup/other.

t.test('the endpoints share the requests by weight (1,000 requests)', async (t) => {
  const rig = await startRig(t);
  const servedBy: Record<string, number> = {};
  for (let batch = 0; batch < 50; batch++) {
    const responses = await Promise.all(Array.from({ length: 20 }, () => rig.gateway.post(ask('pool/main'))));
    for (const response of responses) {
      const by = String(response.headers.get('x-gateway-served-by'));
      servedBy[by] = (servedBy[by] ?? 0) + 1;
      await response.arrayBuffer();
    }
  }
  t.strictSame(Object.keys(servedBy).sort(), ['pool/main#a', 'pool/main#b']);
  t.equal(rig.a.requests.length + rig.b.requests.length, 1000);
  const shareOfA = rig.a.requests.length / 1000;
  t.ok(Math.abs(shareOfA - 0.25) < 0.05, `a served ${rig.a.requests.length} of 1000 (weight 1 of 4)`);
  t.ok(rig.a.requests.every((request) => request.headers['authorization'] === `Bearer ${KEYS.a}`), "a gets a's key");
  t.ok(rig.b.requests.every((request) => request.headers['authorization'] === `Bearer ${KEYS.b}`), "b gets b's key");
});

t.test('a failing endpoint: the other endpoint of the provider answers, before any fallback', async (t) => {
  const rig = await startRig(t);
  rig.b.behave = failing(429);
  for (let i = 0; i < 20; i++) {
    const response = await rig.gateway.post(ask('pool/main'));
    t.equal(response.status, 200);
    t.equal(response.headers.get('x-gateway-served-by'), 'pool/main#a');
    await response.arrayBuffer();
  }
  t.equal(rig.a.requests.length, 20);
  t.ok(rig.b.requests.length > 0, 'b (weight 3) was drawn first some of the time');
  t.equal(rig.backup.requests.length, 0, 'a answered every time');
});

for (const maxAttempts of [1, 2, 3, 5]) {
  t.test(`max_attempts: ${maxAttempts} bounds the attempts; never the same endpoint twice`, async (t) => {
    const rig = await startRig(t, { maxAttempts });
    rig.a.behave = failing(503);
    rig.b.behave = failing(503);
    rig.backup.behave = failing(503);
    const response = await rig.gateway.post(ask('pool/main'));
    t.equal(response.status, 502);
    await response.arrayBuffer();
    const expected = Math.min(maxAttempts, 3);
    t.equal(rig.a.requests.length + rig.b.requests.length + rig.backup.requests.length, expected);
    t.ok(rig.a.requests.length <= 1 && rig.b.requests.length <= 1 && rig.backup.requests.length <= 1);
    if (maxAttempts >= 3) t.equal(rig.backup.requests.length, 1, 'the fallback comes after both endpoints');
    t.equal((rig.gateway.requestLogs()[0]?.['attempts'] as unknown[]).length, expected);
  });
}

t.test('a provider key in an answer is redacted, whichever endpoint served', async (t) => {
  const rig = await startRig(t);
  const echo = (key: string) => (_request: unknown, res: import('node:http').ServerResponse) => sendJson(res, 200, completionBody('m', `keys ${KEYS.a} ${KEYS.b} ${key}`));
  rig.a.behave = echo(KEYS.a);
  rig.b.behave = echo(KEYS.b);
  for (let i = 0; i < 8; i++) {
    const text = await (await rig.gateway.post(ask('pool/main'))).text();
    t.notOk(text.includes(KEYS.a) || text.includes(KEYS.b), 'no key of the provider reaches the caller');
  }
  t.notOk(rig.gateway.logLines.some((line) => line.includes(KEYS.a) || line.includes(KEYS.b)));
});

t.test('the openai client with its default retries, a dead primary and a healthy fallback: one answer', async (t) => {
  const rig = await startRig(t, { soloUrl: `${await refusedOrigin()}/v1` });
  const client = new OpenAI({ baseURL: `${rig.gateway.origin}/v1`, apiKey: 'sk-caller' });
  const completion = await client.chat.completions.create({ model: 'solo/main', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(completion.model, 'solo/main');
  t.equal(rig.backup.requests.length, 1, 'one attempt at the fallback, no retry needed');
});

t.test('the openai client with its default retries when everything fails: bounded attempts', async (t) => {
  const rig = await startRig(t);
  rig.solo.behave = failing(503);
  rig.backup.behave = failing(503);
  const client = new OpenAI({ baseURL: `${rig.gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 2 });
  const failure = await client.chat.completions.create({ model: 'solo/main', messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error);
  t.match(failure, { status: 502 });
  t.equal(rig.solo.requests.length, 3, 'one per request the SDK sent (1 + 2 retries)');
  t.equal(rig.backup.requests.length, 3);
});

t.test('a caller that leaves during failover stops it: nothing more goes upstream, nothing stays tracked', async (t) => {
  const rig = await startRig(t);
  const controller = new AbortController();
  rig.solo.behave = (_request, res) => {
    controller.abort();
    setTimeout(() => sendJson(res, 503, { error: { message: 'busy' } }), 50);
  };
  await t.rejects(fetch(`${rig.gateway.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ask('solo/main')),
    signal: controller.signal,
  }));
  for (let i = 0; i < 50 && rig.gateway.tracked().inFlight > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.strictSame(rig.gateway.tracked(), { inFlight: 0, stopHooks: 0 });
  t.equal(rig.backup.requests.length, 0);
  t.match(rig.gateway.requestLogs()[0], { status: 499, gateway_code: 'caller_disconnected' });
});
