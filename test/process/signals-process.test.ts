// The real server process (dist/server.js) on the shipped routes.yaml: SIGINT drains like SIGTERM, the listener
// answers 503 through the grace period, and the shipped anthropic provider takes its base URL from GATEWAY_ANTHROPIC_BASE_URL.
import t from 'tap';
import { PROVIDER_KEY } from '../helpers/gateway.js';
import { message, startMockAnthropic } from '../helpers/mock-anthropic.js';
import { startMockUpstream } from '../helpers/mock-upstream.js';
import { logLinesOf, startServerProcess, streamUnderWay, waitForOutput } from './server-process.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';

const ask = (model: string, stream: boolean) => JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream });

t.test('SIGINT drains like SIGTERM: the stream in flight finishes, probes and late requests get 503 with Connection: close', async (t) => {
  let finish: () => void = () => {};
  const provider = await startMockUpstream((_request, res) => {
    startEventStream(res);
    res.write(sseBody([chunk('llama3.2', { role: 'assistant', content: 'Hel' })], { done: false }));
    finish = () => res.end(sseBody([chunk('llama3.2', { content: 'lo' }), chunk('llama3.2', {}, { finish_reason: 'stop' })]));
  });
  t.teardown(() => provider.close());
  const server = await startServerProcess({ LOCAL_LLM_BASE_URL: `${provider.origin}/v1`, SHUTDOWN_GRACE_MS: '30000' });
  t.teardown(() => server.child.kill('SIGKILL'));

  const stream = await streamUnderWay(server.origin, ask('local/llama3.2', true));
  server.child.kill('SIGINT');
  // The primary has its worker drain (SIGHUP is a reload: test/process/reload.test.ts).
  const drainingWorkers = await waitForOutput(server, (output) => {
    const lines = logLinesOf(output);
    return lines.some((line) => line['msg'] === 'draining') ? lines.find((line) => line['msg'] === 'draining workers') : undefined;
  });
  t.match(drainingWorkers, { signal: 'SIGINT' });

  const health = await fetch(`${server.origin}/health`);
  t.equal(health.status, 503, 'a probe during the grace period reaches the gateway');
  t.match(await health.json(), { status: 'draining' });
  t.equal(health.headers.get('connection'), 'close');
  const late = await fetch(`${server.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ask('local/llama3.2', false) });
  t.equal(late.status, 503, 'a request that arrives during the drain is sent elsewhere');
  t.equal(late.headers.get('connection'), 'close');
  t.equal(late.headers.get('x-should-retry'), 'true');
  t.match(await late.json(), { error: { gateway_code: 'shutting_down', origin: 'gateway' } });
  t.equal(provider.requests.length, 1, 'the late request never reached the provider');

  finish();
  const text = await stream.rest();
  t.match(text, /"content":"lo"[\s\S]*data: \[DONE\]/, 'the stream in flight finished whole');
  t.equal(await server.exited, 0);
  const lines = logLinesOf(server.output());
  t.match(lines.find((line) => line['msg'] === 'stopped'), { forced_stops: 0 });
  const chats = lines.filter((line) => line['msg'] === 'request' && line['path'] === '/v1/chat/completions');
  t.equal(chats.length, 2, 'each request has its log line');
  t.match(chats.find((line) => line['stream'] === true), { status: 200, gateway_code: null, completed: true });
  t.match(chats.find((line) => line['stream'] !== true), { status: 503, gateway_code: 'shutting_down' });
});

t.test('the shipped anthropic provider reads GATEWAY_ANTHROPIC_BASE_URL', async (t) => {
  const anthropic = await startMockAnthropic(() => ({ json: message([{ type: 'text', text: 'Hi from the mock' }], 'end_turn') }));
  t.teardown(() => anthropic.close());
  const server = await startServerProcess({ GATEWAY_ANTHROPIC_BASE_URL: `${anthropic.origin}/v1`, ANTHROPIC_API_KEY: PROVIDER_KEY });
  t.teardown(() => server.child.kill('SIGKILL'));
  const response = await fetch(`${server.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ask('anthropic/claude-haiku-4-5', false) });
  t.equal(response.status, 200);
  t.match(await response.json(), { model: 'anthropic/claude-haiku-4-5', choices: [{ message: { content: 'Hi from the mock' } }] });
  t.strictSame(anthropic.violations, []);
  t.equal(anthropic.bodies[0]?.['model'], 'claude-haiku-4-5');
});
