import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { compileRoutes } from '../../../scripts/routes/compile-routes.js';
import { formatProblem } from '../../../scripts/routes/problem.js';
import { claudeStream, eventsOf, startInboundRig } from '../../helpers/inbound-rig.js';
import { framed, NATIVE_ROUTES, responseEvents, startNativeRig, type NativeRig } from '../../helpers/native-responses-rig.js';
import { startEventStream } from '../../helpers/sse-upstream.js';

// routes.yaml `api`, hostile native Responses streams, and the translated stream's reasoning items and size limit.

const until = async (check: () => boolean) => {
  for (let i = 0; i < 400 && !check(); i++) await sleep(25);
};
const streamed = (rig: { gateway: { origin: string } }, body: Record<string, unknown>) =>
  fetch(`${rig.gateway.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'hi', stream: true, ...body }) });

t.test('api: responses is for openai-dialect models only: anywhere else it is routes.yaml:LINE:COL', async (t) => {
  const routes = `version: 1
providers:
  claude:
    dialect: anthropic
    base_url: https://api.anthropic.com/v1
  gem:
    dialect: gemini
    base_url: https://generativelanguage.googleapis.com/v1beta
  oai:
    base_url: https://api.openai.com/v1
models:
  claude/a: { max_output_tokens: 1000, api: responses }
  gem/b: { api: chat }
  oai/c: { api: chat }
  oai/d: { api: responses }
  oai/e: { api: soap }
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;
  const bad = compileRoutes(routes);
  t.strictSame(bad.ok ? [] : bad.problems.map((problem) => formatProblem('routes.yaml', problem)), [
    'routes.yaml:12:40: models."claude/a".api: is for models of an openai-dialect provider (this one speaks anthropic): only OpenAI\'s API serves /responses',
    'routes.yaml:13:12: models."gem/b".api: is for models of an openai-dialect provider (this one speaks gemini): only OpenAI\'s API serves /responses',
    'routes.yaml:16:17: models."oai/e".api: must be one of "chat", "responses"',
  ]);
  const good = compileRoutes(NATIVE_ROUTES);
  t.ok(good.ok);
  if (!good.ok) return;
  t.equal(good.tables.models['oai/resp']!.api, 'responses');
  t.notOk('api' in good.tables.models['oai/chat']!, 'chat, the default, leaves the table as it was');
});

/** Writes `text` a few bytes at a time, each piece its own write and (mostly) its own read at the gateway. */
async function dribble(res: ServerResponse, text: string): Promise<void> {
  startEventStream(res);
  const bytes = Buffer.from(text, 'utf8');
  for (let at = 0, step = 1; at < bytes.length; at += step, step = (step % 7) + 1) {
    res.write(bytes.subarray(at, at + step));
    if (at % 5 === 0) await sleep(1);
  }
  res.end();
}

t.test('a native stream split at odd bytes (inside UTF-8 characters too) arrives whole and in order', async (t) => {
  const rig = await startNativeRig(t);
  rig.answer = (_request, _body, res) => void dribble(res, framed(responseEvents(['Grüße ', '— 世界'])).replaceAll('\n', '\r\n'));
  const events = eventsOf((await (await streamed(rig, { model: 'oai/resp' })).text()).replaceAll('\r\n', '\n'));
  t.equal(events.at(-1)!.data['type'], 'response.completed');
  t.equal(events.filter((event) => event.data['type'] === 'response.output_text.delta').map((event) => event.data['delta']).join(''), 'Grüße — 世界');
  t.strictSame(events.map((event) => event.data['sequence_number']), events.map((_event, i) => i));
  t.match(rig.gateway.requestLogs()[0], { gateway_code: null, prompt_tokens: 20 });
});

async function failedEnd(t: Test, rig: NativeRig, code: string): Promise<void> {
  const events = eventsOf(await (await streamed(rig, { model: 'oai/resp' })).text());
  const last = events.at(-1)!;
  t.equal(last.event, 'response.failed');
  t.match(last.data, { type: 'response.failed', response: { id: 'resp_up1', object: 'response', status: 'failed', model: 'oai/resp', error: { code, gateway_code: code, provider: 'oai' } } });
  const numbers = events.map((event) => event.data['sequence_number'] as number);
  t.equal(numbers.at(-1), numbers.at(-2)! + 1, 'numbered after the provider\'s last event');
  await until(() => rig.gateway.tracked().inFlight === 0);
  t.strictSame(rig.gateway.tracked(), { inFlight: 0, stopHooks: 0 });
  t.match(rig.gateway.requestLogs().at(-1), { status: 200, gateway_code: code, provider: 'oai' });
}

t.test('a native stream that ends without response.completed ends with response.failed carrying the envelope', async (t) => {
  const rig = await startNativeRig(t);
  rig.answer = (_request, _body, res) => void dribble(res, framed(responseEvents(['cut'], { end: false })));
  await failedEnd(t, rig, 'upstream_stream_interrupted');
});

t.test('an enormous native event is not held: response.failed, and the provider is let go', async (t) => {
  const rig = await startNativeRig(t, { maxUpstreamBodyBytes: 64 * 1024 });
  rig.answer = (_request, _body, res) => {
    startEventStream(res);
    res.write(framed(responseEvents([], { end: false }).slice(0, 3)));
    res.write(`event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"`);
    const piece = 'x'.repeat(16 * 1024);
    const timer = setInterval(() => res.write(piece), 2);
    res.on('close', () => clearInterval(timer));
  };
  await failedEnd(t, rig, 'invalid_upstream_response');
  await until(() => rig.oai.closedConnections > 0);
  t.ok(rig.oai.closedConnections > 0, 'the provider connection was closed');
});

t.test('a native response.failed or error event before anything reached the caller is the envelope with its status', async (t) => {
  const rig = await startNativeRig(t);
  rig.answer = (_request, _body, res) => {
    startEventStream(res);
    res.end(`event: error\ndata: {"type":"error","code":"rate_limit_exceeded","message":"slow down","sequence_number":0}\n\n`);
  };
  const answer = await streamed(rig, { model: 'oai/resp' });
  t.equal(answer.status, 502);
  t.match(await answer.json(), { error: { provider: 'oai', provider_status: 429, provider_code: 'rate_limit_exceeded', message: 'slow down' } });
});

/** A provider that streams chat text deltas until the gateway hangs up. */
function endless(res: ServerResponse): void {
  startEventStream(res);
  const delta = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'x'.repeat(1000) }, finish_reason: null }] })}\n\n`;
  const timer = setInterval(() => res.write(delta.repeat(20)), 5);
  res.on('close', () => clearInterval(timer));
}

t.test('a translated answer over max_upstream_body_bytes: response.failed names the provider, the log line has the code', async (t) => {
  const rig = await startInboundRig(t, { maxUpstreamBodyBytes: 256 * 1024, oaiHandler: endless });
  const events = eventsOf(await (await streamed(rig, { model: 'oai/gpt' })).text());
  const last = events.at(-1)!;
  t.match(last.data, { type: 'response.failed', response: { status: 'failed', error: { gateway_code: 'invalid_upstream_response', code: 'invalid_upstream_response', provider: 'oai', message: /The provider "oai" sent an answer whose held text would cost more than 262144 bytes of memory/ } } });
  const numbers = events.map((event) => event.data['sequence_number'] as number);
  // The provider writes 20 events per write, so the limit is crossed partway through a read: the events translated
  // from that read before it are still sent, and response.failed is numbered right after them.
  t.ok(numbers.every((n, i) => i === 0 || n === numbers[i - 1]! + 1), 'sequence numbers follow each other with no gap');
  await until(() => rig.gateway.tracked().inFlight === 0 && rig.gateway.requestLogs().length > 0);
  t.match(rig.gateway.requestLogs()[0], { status: 200, provider: 'oai', gateway_code: 'invalid_upstream_response', attempts: [{ outcome: 'invalid_upstream_response' }] });
});

t.test('translated reasoning: encrypted_content in output_item.done and the terminal output, and in output_item.added when the block comes first', async (t) => {
  const rig = await startInboundRig(t);
  rig.claudeAnswer = () => ({
    sse: claudeStream([
      { start: { type: 'thinking', thinking: '', signature: '' }, deltas: [{ type: 'thinking_delta', thinking: 'Two plus two.' }, { type: 'signature_delta', signature: 'c2ln' }] },
      { start: { type: 'redacted_thinking', data: 'UkVEQUNURUQ=' }, deltas: [] },
      { start: { type: 'thinking', thinking: '', signature: '' }, deltas: [{ type: 'thinking_delta', thinking: 'Four.' }, { type: 'signature_delta', signature: 'c2ln2' }] },
      { start: { type: 'text', text: '' }, deltas: [{ type: 'text_delta', text: '4' }] },
    ]),
  });
  const events = eventsOf(await (await streamed(rig, { model: 'claude/sonnet', include: ['reasoning.encrypted_content'], reasoning: { effort: 'low' } })).text());
  const of = (type: string) => events.filter((event) => event.data['type'] === type).map((event) => event.data['item'] as Record<string, unknown>).filter((item) => item['type'] === 'reasoning');
  const decoded = (item: Record<string, unknown> | undefined) => JSON.parse(Buffer.from(String(item?.['encrypted_content']).slice(4), 'base64url').toString('utf8')) as Record<string, unknown>;
  const done = of('response.output_item.done');
  t.equal(done.length, 3, 'one reasoning item per block');
  t.match(decoded(done[0]), { type: 'thinking', thinking: 'Two plus two.', signature: 'c2ln' });
  t.match(decoded(done[1]), { type: 'redacted_thinking', data: 'UkVEQUNURUQ=' });
  t.match(decoded(done[2]), { type: 'thinking', thinking: 'Four.', signature: 'c2ln2' });
  t.match(done.map((item) => item['summary']), [[{ text: 'Two plus two.' }], [], [{ text: 'Four.' }]], 'each text stays with its own block');
  const added = of('response.output_item.added');
  t.notOk('encrypted_content' in added[0]!, 'not known yet when the thinking text opens the item');
  t.equal(added[1]!['encrypted_content'], done[1]!['encrypted_content'], 'a block that comes first is in added too');
  const final = events.at(-1)!.data['response'] as { output: Record<string, unknown>[] };
  t.strictSame(final.output.filter((item) => item['type'] === 'reasoning').map((item) => item['encrypted_content']), done.map((item) => item['encrypted_content']));
});
