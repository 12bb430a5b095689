import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { sendJson } from '../helpers/mock-upstream.js';
import { parseExposition, valueOf } from '../helpers/prometheus.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';
import { ask, failing, healthy, startRig, type Behaviour } from '../helpers/failover-setup.js';

// The circuit breaker through the gateway: solo/main (one endpoint) falls back to backup/other.
// Ejections here are 2 failures in a row, for 1 s doubling up to 4 s.
// Cooldowns of a second, with sleeps 100 ms past them: a loaded machine only makes more time pass, so the one
// assertion that time can break (still ejected) keeps a 900 ms margin.
const BREAKER = '{ consecutive_failures: 2, cooldown_ms: 1000, max_cooldown_ms: 4000 }';

async function send(rig: Awaited<ReturnType<typeof startRig>>, count = 1): Promise<(string | null)[]> {
  const responses = await Promise.all(Array.from({ length: count }, () => rig.gateway.post(ask('solo/main'))));
  return Promise.all(responses.map(async (response) => (await response.arrayBuffer(), response.headers.get('x-gateway-served-by'))));
}

const slowHealthy: Behaviour = (request, res) => void setTimeout(() => healthy(request, res), 150);

t.test('opens after consecutive_failures: the next requests do not reach the ejected endpoint', async (t) => {
  const rig = await startRig(t, { breaker: BREAKER });
  rig.solo.behave = failing(503);
  await send(rig, 1);
  await send(rig, 1);
  t.equal(rig.solo.requests.length, 2);
  t.strictSame(await send(rig, 5), Array(5).fill('backup/other#0'));
  t.equal(rig.solo.requests.length, 2, 'ejected: not tried again during its cooldown');
  t.match(rig.gateway.requestLogs().at(-1), { attempts: [{ route: 'backup/other', outcome: 'ok' }] });
});

t.test('half-open after the cooldown: a single probe, the others still avoid it; its success closes the breaker', async (t) => {
  const rig = await startRig(t, { breaker: BREAKER });
  rig.solo.behave = failing(503);
  await send(rig, 2);
  await send(rig, 1);
  const before = rig.solo.requests.length;
  await sleep(1100);
  rig.solo.behave = slowHealthy;
  const servedBy = await send(rig, 5);
  t.equal(rig.solo.requests.length - before, 1, 'one probe');
  t.equal(servedBy.filter((by) => by === 'solo/main#0').length, 1);
  t.strictSame(await send(rig, 3), Array(3).fill('solo/main#0'), 'closed again');
});

t.test('a failed probe ejects again for twice as long', async (t) => {
  const rig = await startRig(t, { breaker: BREAKER });
  rig.solo.behave = failing(503);
  await send(rig, 1);
  await send(rig, 1); // ejected for 1 s
  await sleep(1100);
  await send(rig, 1); // the probe fails: ejected for 2 s
  t.equal(rig.solo.requests.length, 3);
  await sleep(1100);
  await send(rig, 1);
  t.equal(rig.solo.requests.length, 3, 'still ejected 1.1 s later');
  await sleep(1100);
  rig.solo.behave = healthy;
  t.strictSame(await send(rig, 1), ['solo/main#0'], 'the probe after 2 s');
});

t.test('a 429 with Retry-After ejects the endpoint until then, at once', async (t) => {
  const rig = await startRig(t, { breaker: BREAKER });
  rig.solo.behave = (_request, res) => sendJson(res, 429, { error: { message: 'slow down' } }, { 'retry-after-ms': '1000' });
  t.strictSame(await send(rig, 1), ['backup/other#0']);
  t.strictSame(await send(rig, 3), Array(3).fill('backup/other#0'));
  t.equal(rig.solo.requests.length, 1, 'one 429 was enough');
  await sleep(1100);
  rig.solo.behave = healthy;
  t.strictSame(await send(rig, 1), ['solo/main#0']);
});

t.test('everything ejected: the endpoint whose cooldown ends first still serves, never a 503 for everybody', async (t) => {
  const rig = await startRig(t, { breaker: BREAKER });
  rig.solo.behave = failing(503);
  rig.backup.behave = failing(503);
  await send(rig, 1);
  await send(rig, 1); // solo ejected, then backup a moment later
  t.equal(rig.solo.requests.length + rig.backup.requests.length, 4);
  rig.solo.behave = healthy;
  rig.backup.behave = healthy;
  t.strictSame(await send(rig, 1), ['solo/main#0']);
  t.equal(rig.backup.requests.length, 2, 'the one back later is not tried');
  t.match(rig.gateway.requestLogs().at(-1), { status: 200, attempts: [{ route: 'solo/main', outcome: 'ok' }] });
});

t.test('every attempt feeds the breaker, a fallback\'s included; a 400 does not count', async (t) => {
  const rig = await startRig(t, { breaker: BREAKER });
  rig.solo.behave = failing(400);
  await send(rig, 4);
  t.equal(rig.solo.requests.length, 4, 'a 400 is the request\'s fault, not the endpoint\'s');
  rig.solo.behave = failing(503);
  rig.backup.behave = failing(500);
  await send(rig, 1);
  await send(rig, 1);
  rig.solo.behave = healthy;
  rig.backup.behave = healthy;
  const before = rig.backup.requests.length;
  t.strictSame(await send(rig, 1), ['solo/main#0'], 'both ejected: solo is back first');
  t.equal(rig.backup.requests.length, before);
});

t.test('/metrics: attempts by provider, endpoint and outcome; each endpoint\'s breaker state', async (t) => {
  const rig = await startRig(t, { breaker: BREAKER });
  rig.solo.behave = failing(503);
  await send(rig, 1);
  await send(rig, 1);
  await send(rig, 1);
  const samples = parseExposition(await (await fetch(`${rig.gateway.origin}/metrics`)).text());
  t.equal(valueOf(samples, 'gateway_upstream_attempts_total', { provider: 'solo', endpoint: '0', outcome: '503' }), 2);
  t.equal(valueOf(samples, 'gateway_upstream_attempts_total', { provider: 'backup', endpoint: '0', outcome: 'ok' }), 3);
  const state = (provider: string, endpoint: string, each: string) => valueOf(samples, 'gateway_endpoint_breaker_state', { provider, endpoint, state: each });
  t.strictSame([state('solo', '0', 'closed'), state('solo', '0', 'open'), state('solo', '0', 'half_open')], [0, 1, 0]);
  t.strictSame([state('pool', 'a', 'closed'), state('pool', 'b', 'closed'), state('backup', '0', 'closed')], [1, 1, 1]);
  await sleep(1100);
  const later = parseExposition(await (await fetch(`${rig.gateway.origin}/metrics`)).text());
  t.equal(valueOf(later, 'gateway_endpoint_breaker_state', { provider: 'solo', endpoint: '0', state: 'half_open' }), 1);
});

t.test('streams the provider cuts after their first event count as failures, though they cannot fail over', async (t) => {
  const rig = await startRig(t, { breaker: BREAKER });
  rig.solo.behave = (_request, res) => {
    startEventStream(res);
    res.write(sseBody([chunk('main-upstream', { role: 'assistant', content: 'half' })], { done: false }));
    setTimeout(() => res.socket?.destroy(), 20);
  };
  for (let i = 0; i < 2; i++) {
    const response = await rig.gateway.post(ask('solo/main', { stream: true }));
    t.equal(response.status, 200);
    await response.text();
  }
  t.strictSame(await send(rig, 2), ['backup/other#0', 'backup/other#0'], 'ejected after two cut streams');
  t.equal(rig.solo.requests.length, 2);
});
