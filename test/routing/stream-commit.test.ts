// A stream commits when its first event reaches the caller (issue 19, items 3-6): before it, an in-band error, a
// cut or silence is a failure like an HTTP error (failover, breaker, Retry-After); a probe's verdict is its
// first event; every attempt, a streamed one included, is in the log line and the metrics; a fallback that
// cannot express the request is skipped.
import type { ServerResponse } from 'node:http';
import t, { type Test } from 'tap';
import { envelopeOf, PROVIDER_KEY, startGateway } from '../helpers/gateway.js';
import { ask, switchable } from '../helpers/failover-setup.js';
import { completionBody, sendJson, type RecordedRequest } from '../helpers/mock-upstream.js';
import { anthropicSse, startMockAnthropic, streamOf } from '../helpers/mock-anthropic.js';
import { parseExposition, valueOf } from '../helpers/prometheus.js';
import { chunk, readDataEvents, sseBody, startEventStream } from '../helpers/sse-upstream.js';

const ROUTES = `version: 1
providers:
  backup: { base_url: http://127.0.0.1:9/v1, base_url_env: BACKUP_URL, api_key_env: MOCK_API_KEY }
  claude: { dialect: anthropic, base_url: http://127.0.0.1:9/v1, base_url_env: CLAUDE_URL, api_key_env: MOCK_API_KEY }
  solo: { base_url: http://127.0.0.1:9/v1, base_url_env: SOLO_URL, api_key_env: MOCK_API_KEY, stream_idle_timeout_ms: 400 }
models:
  backup/other: { upstream_model: other-upstream }
  claude/main: { upstream_model: claude-x, max_output_tokens: 1000, fallback: [backup/other] }
  solo/main: { upstream_model: main-upstream, fallback: [backup/other] }
  solo/to-claude: { upstream_model: main-upstream, fallback: [claude/main] }
  solo/to-claude-then-backup: { upstream_model: main-upstream, fallback: [claude/main, backup/other] }
defaults: { max_attempts: 3, breaker: { consecutive_failures: 2, cooldown_ms: 300 } }
errors:
  "529": { status: 503, type: server_error, code: upstream_overloaded, gateway_code: provider_overloaded, retry: true }
  "4xx": { status: 400, type: invalid_request_error, code: invalid_request, gateway_code: provider_rejected_request }
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

type AnthropicBehaviour = (body: Record<string, unknown>) => string;

/** solo and backup (OpenAI dialect) and claude (Anthropic) on real mocks; backup streams "from backup" unless told otherwise. */
async function rig(t: Test, claudeSse: AnthropicBehaviour = () => anthropicSse(streamOf([{ start: { type: 'text', text: '' }, deltas: [{ type: 'text_delta', text: 'from claude' }] }], 'end_turn'))) {
  const [solo, backup] = await Promise.all([switchable(t), switchable(t, streamed('from backup'))]);
  const claude = await startMockAnthropic((body) => ({ sse: claudeSse(body), pieceSize: 4096 }));
  t.teardown(() => claude.close());
  const gateway = await startGateway({
    routes: ROUTES,
    env: { SOLO_URL: `${solo.origin}/v1`, BACKUP_URL: `${backup.origin}/v1`, CLAUDE_URL: `${claude.origin}/v1`, MOCK_API_KEY: PROVIDER_KEY },
  });
  t.teardown(() => gateway.close());
  return { gateway, solo, backup, claude };
}

/** A healthy answer: streamed when asked for, else whole. */
function streamed(content: string) {
  return (request: RecordedRequest, res: ServerResponse) => {
    const body = JSON.parse(request.body) as { model: string; stream?: boolean };
    if (!body.stream) return sendJson(res, 200, completionBody(body.model, content));
    startEventStream(res);
    res.end(sseBody([chunk(body.model, { role: 'assistant', content }), chunk(body.model, {}, { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })]));
  };
}

const contentOf = async (response: Response) =>
  (await readDataEvents(response))
    .filter((event) => event !== '[DONE]')
    .map((event) => (JSON.parse(event) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '')
    .join('');
const metrics = async (origin: string) => parseExposition(await (await fetch(`${origin}/metrics`)).text());
/** The log line of the request, once written (it is written when the response closes). */
async function logOf(gateway: Awaited<ReturnType<typeof rig>>['gateway']) {
  for (let i = 0; i < 200 && gateway.requestLogs().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  return gateway.requestLogs().at(-1);
}

const OVERLOADED = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
const MESSAGE_START = streamOf([], 'end_turn')[0]!;

for (const [what, events] of [
  ['as its first event', [OVERLOADED]],
  ['right after message_start and a ping', [MESSAGE_START, { type: 'ping' }, OVERLOADED]],
  ['after message_start and an empty text block opened', [MESSAGE_START, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, { type: 'ping' }, OVERLOADED]],
] as const) {
  t.test(`Anthropic's overloaded_error after its 200, ${what}, fails over like a 529, and both attempts are logged and counted`, async (t) => {
    const { gateway, backup } = await rig(t, () => anthropicSse(events as unknown as Record<string, unknown>[]));
    const response = await gateway.post(ask('claude/main', { stream: true }));
    t.equal(response.status, 200);
    t.equal(response.headers.get('x-gateway-served-by'), 'backup/other#0');
    t.equal(await contentOf(response), 'from backup', 'the fallback answered; nothing of the failed stream reached the caller');
    t.equal(backup.requests.length, 1);
    t.match(await logOf(gateway), {
      status: 200,
      provider: 'backup',
      gateway_code: null,
      attempts: [{ route: 'claude/main', provider: 'claude', outcome: '529' }, { route: 'backup/other', provider: 'backup', outcome: 'ok' }],
    });
    const samples = await metrics(gateway.origin);
    t.equal(valueOf(samples, 'gateway_upstream_attempts_total', { provider: 'claude', endpoint: '0', outcome: '529' }), 1);
    t.equal(valueOf(samples, 'gateway_upstream_attempts_total', { provider: 'backup', endpoint: '0', outcome: 'ok' }), 1, 'the successful streamed attempt is counted');
  });
}

t.test('with nowhere to fail over, an error event before the first event is answered as its status would be: JSON, never a 200 stream', async (t) => {
  const { gateway, backup } = await rig(t, () => anthropicSse([MESSAGE_START, OVERLOADED]));
  backup.behave = (_request, res) => {
    startEventStream(res);
    res.end(sseBody([{ error: { code: 502, message: 'Provider returned error' } }], { done: false }));
  };
  const response = await gateway.post(ask('claude/main', { stream: true }));
  t.equal(response.status, 502, "the last attempt's failure: OpenRouter's in-band 502");
  t.equal(response.headers.get('x-should-retry'), 'true');
  t.match(await envelopeOf(response), { gateway_code: 'provider_error', provider: 'backup', provider_status: 502, provider_code: '502', message: 'Provider returned error' });
  t.match(await logOf(gateway), { status: 502, attempts: [{ provider: 'claude', outcome: '529' }, { provider: 'backup', outcome: '502' }] });
});

const reset = (_request: RecordedRequest, res: ServerResponse) => {
  startEventStream(res);
  setTimeout(() => res.socket?.destroy(), 30);
};
const silent = (_request: RecordedRequest, res: ServerResponse) => startEventStream(res);
for (const [what, behaviour, outcome] of [
  ['an OpenRouter-style error chunk', (_request: RecordedRequest, res: ServerResponse) => {
    startEventStream(res);
    res.end(sseBody([': OPENROUTER PROCESSING', { id: 'gen-1', object: 'chat.completion.chunk', error: { code: 502, message: 'Provider disconnected' }, choices: [] }].map((e) => e), { done: false }).replace('data: : OPENROUTER PROCESSING', ': OPENROUTER PROCESSING'));
  }, '502'],
  ['a reset', reset, 'upstream_stream_interrupted'],
  ['silence past stream_idle_timeout_ms', silent, 'upstream_stream_timeout'],
] as const) {
  t.test(`${what} before the first event fails over and counts against the endpoint`, async (t) => {
    const { gateway, solo, backup } = await rig(t);
    solo.behave = behaviour;
    for (let i = 0; i < 2; i++) {
      const response = await gateway.post(ask('solo/main', { stream: true }));
      t.equal(response.status, 200);
      t.equal(await contentOf(response), 'from backup');
    }
    t.match(gateway.requestLogs()[0], { attempts: [{ route: 'solo/main', outcome }, { route: 'backup/other', outcome: 'ok' }] });
    t.equal(solo.requests.length, 2);
    // consecutive_failures: 2: the endpoint is ejected now.
    t.equal(await contentOf(await gateway.post(ask('solo/main', { stream: true }))), 'from backup');
    t.equal(solo.requests.length, 2, 'ejected after two failed streams');
    t.equal(backup.requests.length, 3);
  });
}

t.test("a Retry-After on the 200 of a stream that fails with a 429 before its first event ejects the endpoint until then", async (t) => {
  const { gateway, solo } = await rig(t);
  solo.behave = (_request, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'retry-after': '30' });
    res.end(sseBody([{ error: { code: 429, message: 'Rate limited upstream' } }], { done: false }));
  };
  t.equal(await contentOf(await gateway.post(ask('solo/main', { stream: true }))), 'from backup');
  t.equal(await contentOf(await gateway.post(ask('solo/main', { stream: true }))), 'from backup');
  t.equal(solo.requests.length, 1, 'one 429 ejected it at once (consecutive_failures is 2)');
});

t.test('an in-band error after the first event is a breaker failure: the caller gets it, the endpoint is ejected after two', async (t) => {
  const { gateway, solo, backup } = await rig(t);
  solo.behave = (_request, res) => {
    startEventStream(res);
    res.end(sseBody([chunk('main-upstream', { role: 'assistant', content: 'half' }), { error: { code: 502, message: 'Provider disconnected' } }], { done: false }));
  };
  for (let i = 0; i < 2; i++) {
    const events = await readDataEvents(await gateway.post(ask('solo/main', { stream: true })));
    t.match(JSON.parse(events.at(-1)!), { error: { gateway_code: 'provider_stream_error' } });
  }
  t.match(await logOf(gateway), { attempts: [{ route: 'solo/main', outcome: 'provider_stream_error' }] });
  t.equal(await contentOf(await gateway.post(ask('solo/main', { stream: true }))), 'from backup', 'ejected: the next request goes to the fallback');
  t.equal(solo.requests.length, 2);
  t.equal(backup.requests.length, 1);
});

t.test('a successful stream is in the log line and the metrics before its response ends', async (t) => {
  const { gateway, solo } = await rig(t);
  solo.behave = streamed('from solo');
  t.equal(await contentOf(await gateway.post(ask('solo/main', { stream: true }))), 'from solo');
  t.match(await logOf(gateway), { status: 200, gateway_code: null, attempts: [{ route: 'solo/main', provider: 'solo', endpoint: '0', outcome: 'ok' }] });
  t.equal((gateway.requestLogs()[0]?.['attempts'] as unknown[]).length, 1);
  t.equal(valueOf(await metrics(gateway.origin), 'gateway_upstream_attempts_total', { provider: 'solo', endpoint: '0', outcome: 'ok' }), 1);
});

t.test("a half-open probe's verdict is its first event: the endpoint is readmitted while the probe's stream goes on", async (t) => {
  const { gateway, solo } = await rig(t);
  solo.behave = (_request, res) => sendJson(res, 500, { error: { message: 'down' } });
  for (let i = 0; i < 2; i++) await (await gateway.post(ask('solo/main'))).text();
  t.equal(solo.requests.length, 2, 'ejected after two failures');
  await new Promise((resolve) => setTimeout(resolve, 450)); // cooldown_ms 300
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  solo.behave = async (request, res) => {
    if (!(JSON.parse(request.body) as { stream?: boolean }).stream) return sendJson(res, 200, completionBody('main-upstream', 'solo again'));
    startEventStream(res);
    res.write(sseBody([chunk('main-upstream', { role: 'assistant', content: 'probe' })], { done: false }));
    await released;
    res.end('data: [DONE]\n\n');
  };
  const probe = await gateway.post(ask('solo/main', { stream: true }));
  const reader = probe.body!.getReader();
  t.match(new TextDecoder().decode((await reader.read()).value), /probe/, "the probe's first event arrived; its stream is still open");
  const next = await gateway.post(ask('solo/main'));
  t.equal(next.headers.get('x-gateway-served-by'), 'solo/main#0', 'the next request is served by the readmitted endpoint');
  t.match(await next.json(), { choices: [{ message: { content: 'solo again' } }] });
  release();
  while (!(await reader.read()).done);
});

t.test('a fallback whose dialect cannot express the request is skipped: the caller gets the last real failure, not a 400', async (t) => {
  const { gateway, solo, claude } = await rig(t);
  solo.behave = (_request, res) => sendJson(res, 500, { error: { message: 'primary down' } });
  const response = await gateway.post(ask('solo/to-claude', { n: 2 }));
  t.equal(response.status, 502);
  t.equal(response.headers.get('x-should-retry'), 'true');
  t.match(await envelopeOf(response), { gateway_code: 'provider_error', provider: 'solo', provider_status: 500 });
  t.equal(claude.requests.length, 0);
  t.match(await logOf(gateway), { status: 502, provider: 'solo', attempts: [{ route: 'solo/to-claude', outcome: '500' }, { route: 'claude/main', provider: 'claude', endpoint: '', outcome: 'unsupported_parameter' }] });
});

t.test('a fallback that cannot express the request is skipped for the next one, which answers', async (t) => {
  const { gateway, solo, backup, claude } = await rig(t);
  solo.behave = (_request, res) => sendJson(res, 500, { error: { message: 'primary down' } });
  backup.behave = streamed('from backup');
  const response = await gateway.post(ask('solo/to-claude-then-backup', { n: 2 }));
  t.equal(response.status, 200);
  t.equal(response.headers.get('x-gateway-served-by'), 'backup/other#0');
  t.match(await response.json(), { model: 'solo/to-claude-then-backup', choices: [{ message: { content: 'from backup' } }] });
  t.equal(claude.requests.length, 0);
  t.match(await logOf(gateway), { attempts: [{ outcome: '500' }, { route: 'claude/main', outcome: 'unsupported_parameter' }, { route: 'backup/other', outcome: 'ok' }] });
});

t.test('when the primary itself cannot express the request, the 400 stays', async (t) => {
  const { gateway, backup, claude } = await rig(t);
  const response = await gateway.post(ask('claude/main', { n: 2 }));
  t.equal(response.status, 400);
  t.match(await envelopeOf(response), { gateway_code: 'unsupported_parameter', param: 'n' });
  t.equal(claude.requests.length + backup.requests.length, 0);
});

