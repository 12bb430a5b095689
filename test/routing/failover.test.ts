import t from 'tap';
import { MAX_LOG_LINE_BYTES } from '../../src/observe/log-fields.js';
import { envelopeOf, startGateway } from '../helpers/gateway.js';
import { ask, failing, modelsSent, refusedOrigin, silentOrigin, startRig, type Behaviour } from '../helpers/failover-setup.js';
import { chunk, readDataEvents, sseBody, startEventStream } from '../helpers/sse-upstream.js';

// Failover (README: Failover) against real mock providers: solo/main has one endpoint and falls back to backup/other.

const reset: Behaviour = (_request, res) => void res.socket?.destroy();
const hang: Behaviour = () => new Promise<void>(() => {});

for (const status of [401, 403, 429, 500, 503, 529]) {
  t.test(`a ${status} from the primary fails over to the fallback, with its own upstream model`, async (t) => {
    const rig = await startRig(t);
    rig.solo.behave = failing(status);
    const response = await rig.gateway.post(ask('solo/main'));
    t.equal(response.status, 200);
    t.equal(response.headers.get('x-gateway-served-by'), 'backup/other#0');
    const body = (await response.json()) as { model: string };
    t.equal(body.model, 'solo/main', 'the model is still the caller\'s routing string');
    t.strictSame(modelsSent(rig.solo), ['main-upstream']);
    t.strictSame(modelsSent(rig.backup), ['other-upstream']);
    t.equal(rig.backup.requests[0]?.body, rig.solo.requests[0]?.body.replace('main-upstream', 'other-upstream'), 'the same body, its own model');
    const [log] = rig.gateway.requestLogs();
    t.match(log, { provider: 'backup', status: 200, attempts: [{ route: 'solo/main', endpoint: '0', outcome: String(status) }, { route: 'backup/other', endpoint: '0', outcome: 'ok' }] });
  });
}

for (const status of [400, 404, 422]) {
  t.test(`a ${status} is the request's fault: no failover`, async (t) => {
    const rig = await startRig(t);
    rig.solo.behave = failing(status);
    const response = await rig.gateway.post(ask('solo/main'));
    t.equal(response.status, 400);
    t.match(await envelopeOf(response), { provider: 'solo', provider_status: status });
    t.equal(rig.backup.requests.length, 0);
    t.equal(response.headers.get('x-gateway-served-by'), 'solo/main#0');
  });
}

const transport: [string, Behaviour | 'refused' | 'silent', string][] = [
  ['refused', 'refused', 'upstream_unreachable'],
  ['reset before any response', reset, 'upstream_unreachable'],
  ['a connect timeout', 'silent', 'upstream_connect_timeout'],
  ['no answer within timeout_ms', hang, 'upstream_timeout'],
];
for (const [what, behaviour, outcome] of transport) {
  t.test(`${what} fails over (${outcome})`, async (t) => {
    const soloUrl = behaviour === 'refused' ? `${await refusedOrigin()}/v1` : behaviour === 'silent' ? `${await silentOrigin(t)}/v1` : undefined;
    const rig = await startRig(t, soloUrl ? { soloUrl } : {});
    if (typeof behaviour === 'function') rig.solo.behave = behaviour;
    const response = await rig.gateway.post(ask('solo/main'));
    t.equal(response.status, 200);
    t.equal(rig.backup.requests.length, 1);
    t.match(rig.gateway.requestLogs()[0], { attempts: [{ endpoint: '0', outcome }, { route: 'backup/other', outcome: 'ok' }] });
  });
}

t.test('a fallback in another dialect: the same caller body, translated for Anthropic', async (t) => {
  const rig = await startRig(t);
  rig.solo.behave = failing(503);
  const response = await rig.gateway.post(ask('solo/to-claude'));
  t.equal(response.status, 200);
  t.equal(response.headers.get('x-gateway-served-by'), 'claude/sonnet#0');
  const body = (await response.json()) as { model: string; choices: { message: { content: string } }[] };
  t.equal(body.model, 'solo/to-claude');
  t.equal(body.choices[0]?.message.content, 'from claude');
  t.match(rig.claude.bodies, [{ model: 'claude-sonnet-x', max_tokens: 1000 }]);
  t.strictSame(rig.claude.violations, []);
});

t.test('when every attempt fails, the last answer is mapped as today', async (t) => {
  const rig = await startRig(t);
  rig.solo.behave = failing(503);
  rig.backup.behave = failing(429);
  const response = await rig.gateway.post(ask('solo/main'));
  t.equal(response.status, 400, 'the 4xx rule of the error table');
  t.match(await envelopeOf(response), { provider: 'backup', provider_status: 429 });
  t.equal(response.headers.get('x-gateway-served-by'), 'backup/other#0');
});

t.test('a stream fails over before its first event', async (t) => {
  const rig = await startRig(t);
  rig.solo.behave = failing(503);
  rig.backup.behave = (_request, res) => {
    startEventStream(res);
    res.end(sseBody([chunk('other-upstream', { role: 'assistant', content: 'hi' })]));
  };
  const response = await rig.gateway.post(ask('solo/main', { stream: true }));
  t.equal(response.status, 200);
  t.equal(response.headers.get('x-gateway-served-by'), 'backup/other#0');
  const events = await readDataEvents(response);
  t.match(JSON.parse(events[0]!), { model: 'solo/main', choices: [{ delta: { content: 'hi' } }] });
});

t.test('no failover once the first event was sent: the caller gets the in-band error', async (t) => {
  const rig = await startRig(t);
  rig.solo.behave = (_request, res) => {
    startEventStream(res);
    res.write(sseBody([chunk('main-upstream', { role: 'assistant', content: 'half' })], { done: false }));
    setTimeout(() => res.socket?.destroy(), 20);
  };
  const response = await rig.gateway.post(ask('solo/main', { stream: true }));
  t.equal(response.status, 200);
  const events = await readDataEvents(response);
  t.match(JSON.parse(events[0]!), { choices: [{ delta: { content: 'half' } }] });
  t.match(JSON.parse(events.at(-1)!), { error: { provider: 'solo' } });
  t.equal(rig.backup.requests.length, 0, 'never a spliced answer');
  t.match(rig.gateway.requestLogs()[0], { attempts: [{ route: 'solo/main', outcome: 'upstream_stream_interrupted' }] });
  t.equal((rig.gateway.requestLogs()[0]?.['attempts'] as unknown[]).length, 1);
});

t.test('a log line with max_attempts attempts of the longest names stays within MAX_LOG_LINE_BYTES', async (t) => {
  const id = `p${'x'.repeat(63)}`;
  const model = `${id}/${'"'.repeat(256 - id.length - 1)}`;
  const url = `${await refusedOrigin()}/v1`;
  const endpoints = Array.from({ length: 5 }, (_, i) => `      - { name: ${String(i).padEnd(32, 'n')}, base_url: "${url}" }`).join('\n');
  const routes = `version: 1\nproviders:\n  ${id}:\n    endpoints:\n${endpoints}\nmodels:\n  ${JSON.stringify(model)}:\ndefaults: { max_attempts: 5 }\nerrors:\n  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }\n`;
  const gateway = await startGateway({ routes });
  t.teardown(() => gateway.close());
  const response = await gateway.post(ask(model), { 'x-request-id': 'r'.repeat(128) });
  t.equal(response.status, 502);
  await response.arrayBuffer();
  t.equal((gateway.requestLogs()[0]?.['attempts'] as unknown[]).length, 5);
  for (const line of gateway.logLines) t.ok(Buffer.byteLength(line) <= MAX_LOG_LINE_BYTES, `${Buffer.byteLength(line)} bytes`);
});
