// Issue 34, items 1-3, against a gateway process with a 256 MiB heap and default limits: a Responses stream keeps
// only its bounded echo of the request after its commit; what a stream holds is bounded with the copies made of it
// (MAX_UPSTREAM_BODY_BYTES), and what all streams hold together by MAX_STREAM_BYTES_IN_FLIGHT. Each of these killed
// the process; now the streams end with their error and /health answers throughout.
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { startEventStream } from '../helpers/sse-upstream.js';

// Hundreds of MiB through a real process on a shared machine.
t.setTimeout(420_000);

const CHILD = fileURLToPath(new URL('./gateway-child.ts', import.meta.url));
const ROUTES = `version: 1
providers:
  oai: { base_url: http://127.0.0.1:9/v1, base_url_env: OAI_URL, api_key_env: OAI_KEY }
  claude: { dialect: anthropic, base_url: http://127.0.0.1:9/v1, base_url_env: CLAUDE_URL, api_key_env: CLAUDE_KEY }
  gem: { dialect: gemini, base_url: http://127.0.0.1:9/v1beta, base_url_env: GEM_URL, api_key_env: GEM_KEY }
models:
  claude/big: { upstream_model: claude-big-1, max_output_tokens: 64000 }
  gem/big: { upstream_model: gemini-big, max_output_tokens: 65536 }
  gem/small: { upstream_model: gemini-small, max_output_tokens: 65536 }
  oai/gpt: { upstream_model: gpt-test }
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;
const MiB = 1024 * 1024;
const DELTA_CHARS = 256 * 1024;

type Handler = (url: string, res: ServerResponse) => Promise<void>;

/** The providers on one mock (by path) and a gateway process with a 256 MiB heap in front of them; `handler` answers. */
async function startRig(t: Test, handler: Handler): Promise<{ server: ServerProcess; provider: MockUpstream; exitCode: () => number | null | undefined }> {
  const provider = await startMockUpstream(async (request, res) => {
    // The 14 MiB prompts of item 1 are not kept by the mock.
    provider.requests.length = 0;
    await handler(request.url, res);
  });
  t.teardown(() => provider.close());
  const v1 = `${provider.origin}/v1`;
  const server = await startServerProcess(
    { OAI_URL: v1, OAI_KEY: 'sk-test-oai', CLAUDE_URL: v1, CLAUDE_KEY: 'sk-test-claude', GEM_URL: `${provider.origin}/v1beta`, GEM_KEY: 'gem-test-key', GATEWAY_ROUTES_YAML: ROUTES },
    ['--max-old-space-size=256', '--import=tsx', CHILD],
  );
  t.teardown(() => server.child.kill('SIGKILL'));
  let exitCode: number | null | undefined;
  void server.exited.then((code) => (exitCode = code));
  return { server, provider, exitCode: () => exitCode };
}

/** Polls /health while `during` runs; every status seen (0: no answer). */
async function healthDuring<T>(origin: string, during: Promise<T>): Promise<{ result: T; statuses: (number | string)[] }> {
  const statuses: (number | string)[] = [];
  let done = false;
  const polling = (async () => {
    while (!done) {
      const asked = Date.now();
      // A poll that fails says how and after how long (a timeout, a reset), so a failure here can be told apart.
      const failed = (error: Error & { cause?: { code?: string } }) => `${error.name}${error.cause?.code ? ` ${error.cause.code}` : ''} after ${Date.now() - asked} ms`;
      statuses.push(await fetch(`${origin}/health`, { signal: AbortSignal.timeout(10_000) }).then((r) => r.status, failed));
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  const result = await during.finally(() => (done = true));
  await polling;
  return { result, statuses };
}

/** Writes the events `eventAt` gives after `head`, as fast as the gateway reads them, until `count` or the gateway lets go; the bytes sent. */
async function pour(res: ServerResponse, head: string, eventAt: (i: number) => string, count: number, tail: string): Promise<number> {
  startEventStream(res);
  const closed = once(res, 'close');
  let sent = head.length;
  res.write(head);
  for (let i = 0; i < count; i++) {
    if (res.destroyed || res.writableEnded) return sent;
    const event = eventAt(i);
    sent += event.length;
    if (!res.write(event)) await Promise.race([once(res, 'drain'), closed]);
  }
  if (!res.destroyed) res.end(tail);
  return sent;
}

const sse = (event: Record<string, unknown>) => `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`;
const gemini = (record: Record<string, unknown>) => `data: ${JSON.stringify(record)}\r\n\r\n`;
const geminiText = (text: string, last = false) =>
  gemini({ candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }], ...(last ? { usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 } } : {}) });

/** Anthropic: `total` characters of text in 256 KiB deltas, then a proper end. */
function anthropicText(res: ServerResponse, total: number): Promise<number> {
  const head =
    sse({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 5, output_tokens: 1 } } }) +
    sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  const delta = sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'a'.repeat(DELTA_CHARS) } });
  const tail = sse({ type: 'content_block_stop', index: 0 }) + sse({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }) + sse({ type: 'message_stop' });
  return pour(res, head, () => delta, Math.ceil(total / DELTA_CHARS), tail);
}

/** Gemini: `total` characters of text in 256 KiB parts, the last record with the finish reason. */
function geminiManyParts(res: ServerResponse, total: number): Promise<number> {
  // Text beyond Latin-1: V8 stores it two bytes a character, the costlier case.
  const record = geminiText('中'.repeat(DELTA_CHARS));
  return pour(res, '', () => record, Math.ceil(total / DELTA_CHARS), geminiText('.', true));
}

/** Gemini: one record whose one part holds `total` characters, written in 256 KiB pieces as the gateway reads them. */
function geminiOnePart(res: ServerResponse, total: number): Promise<number> {
  const record = geminiText('p'.repeat(total), true);
  const pieces = Math.ceil(record.length / DELTA_CHARS);
  return pour(res, '', (i) => record.slice(i * DELTA_CHARS, (i + 1) * DELTA_CHARS), pieces, '');
}

/** POSTs `body` to `path` and reads the answer to its end; keeps its status, size and last event. */
async function ask(origin: string, path: string, body: string): Promise<{ status: number; bytes: number; last: string }> {
  let status = 0;
  let bytes = 0;
  let tail = '';
  try {
    const response = await fetch(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    status = response.status;
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    for (let part = await reader.read(); !part.done; part = await reader.read()) {
      bytes += part.value.length;
      // The last event may be large (response.failed carries the output so far): enough is kept to hold it.
      tail = (tail + decoder.decode(part.value, { stream: true })).slice(-16 * MiB);
    }
  } catch {
    // A connection cut (a process that died) is asserted by the caller, not thrown.
    tail += '\n\ndata: {"cut":true}';
  }
  return { status, bytes, last: tail.trim().split('\n\n').at(-1) ?? '' };
}

const lastData = (last: string) => JSON.parse(last.slice(last.indexOf('data: ') + 6)) as Record<string, unknown>;
const responsesBody = (model: string) => JSON.stringify({ model, input: 'write a lot', stream: true });
const chatBody = (model: string) => JSON.stringify({ model, messages: [{ role: 'user', content: 'write a lot' }], stream: true });

t.test('item 1: ten Responses streams with 14 MiB instructions each open at once keep only their bounded echo', async (t) => {
  const CALLERS = 10;
  const open: ServerResponse[] = [];
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-test', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const { server, exitCode } = await startRig(t, async (_url, res) => {
    startEventStream(res);
    res.write(chunk({ role: 'assistant', content: 'hi' }));
    open.push(res);
    // Every stream stays open until all of them are: the gateway holds them all at once.
    if (open.length === CALLERS) for (const each of open) each.end(chunk({}, 'stop') + 'data: [DONE]\n\n');
  });
  const body = JSON.stringify({ model: 'oai/gpt', instructions: 'i'.repeat(14 * MiB), input: 'hi', stream: true, metadata: { run: 'memory' } });

  const callers = (async () => {
    const rests: Promise<string>[] = [];
    for (let i = 0; i < CALLERS; i++) {
      // One at a time until each stream is under way (committed), so no body waits for MAX_BODY_BYTES_IN_FLIGHT.
      const response = await fetch(`${server.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).catch(() => undefined);
      if (!t.equal(response?.status, 200, `caller ${i} is streamed to`) || !response) break;
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = decoder.decode((await reader.read()).value, { stream: true });
      const rest = async () => {
        for (let part = await reader.read(); !part.done; part = await reader.read()) text += decoder.decode(part.value, { stream: true });
        return text;
      };
      // A stream cut short (a process that died) is asserted below, not thrown.
      rests.push(rest().catch(() => `${text}\n\nevent: cut\ndata: {"type":"cut"}`));
    }
    return Promise.all(rests);
  })();
  const { result: texts, statuses } = await healthDuring(server.origin, callers);
  t.equal(texts.length, CALLERS, 'every caller was streamed to');
  for (const text of texts) {
    const frames = text.trim().split('\n\n');
    const created = frames.find((frame) => frame.startsWith('event: response.created'))!;
    t.ok(created.length < 300 * 1024, `response.created echoes at most MAX_ECHO_CHARS of the request (${created.length} characters)`);
    t.match(lastData(created), { response: { instructions: null, metadata: { run: 'memory' }, status: 'in_progress' } }, 'the 14 MiB instructions are not echoed; the rest is');
    t.match(lastData(frames.at(-1)!), { type: 'response.completed', response: { status: 'completed' } });
  }
  t.ok(statuses.length > 0 && statuses.every((status) => status === 200), `/health throughout: ${statuses.join(',')}`);
  t.equal(exitCode(), undefined, 'the process is still running');
  t.notMatch(server.output(), /heap out of memory|FATAL ERROR/);
});

t.test('item 2: a 35 MiB answer through /v1/responses from anthropic and gemini ends with invalid_upstream_response', async (t) => {
  const sent: number[] = [];
  const { server, exitCode } = await startRig(t, async (url, res) => {
    sent.push(await (url.includes('/v1beta/') ? geminiManyParts(res, 35 * MiB) : anthropicText(res, 35 * MiB)));
  });
  for (const model of ['claude/big', 'gem/big']) {
    const { result, statuses } = await healthDuring(server.origin, ask(server.origin, '/v1/responses', responsesBody(model)));
    t.equal(result.status, 200, `${model}: the stream had begun`);
    t.match(lastData(result.last), { type: 'response.failed', response: { error: { gateway_code: 'invalid_upstream_response', message: /would cost more than \d+ bytes of memory with its copies/ } } });
    t.ok(statuses.length > 0 && statuses.every((status) => status === 200), `/health throughout: ${statuses.join(',')}`);
  }
  t.ok(sent.every((bytes) => bytes < 35 * MiB), `the providers were cut off after ${sent.map((bytes) => (bytes / MiB).toFixed(1)).join(' and ')} MiB`);
  t.equal(exitCode(), undefined, 'the process is still running');
  t.notMatch(server.output(), /heap out of memory|FATAL ERROR/);
});

t.test('item 3: ten hostile streams at once (60 MiB Gemini parts, 6 MiB ones, 35 MiB answers) end with their errors', async (t) => {
  const { server, exitCode } = await startRig(t, async (url, res) => {
    if (url.includes('/v1beta/')) await geminiOnePart(res, url.includes('gemini-big') ? 60 * MiB : 6 * MiB);
    else await anthropicText(res, 35 * MiB);
  });
  const streams = [
    ...[1, 2, 3, 4].map(() => ask(server.origin, '/v1/chat/completions', chatBody('gem/big'))),
    ...[1, 2, 3].map(() => ask(server.origin, '/v1/responses', responsesBody('gem/small'))),
    ...[1, 2, 3].map(() => ask(server.origin, '/v1/responses', responsesBody('claude/big'))),
  ];
  const { result, statuses } = await healthDuring(server.origin, Promise.all(streams));
  for (const answer of result) {
    // Before its first event a stream is refused with the envelope; after it, it ends with its error event.
    t.match(answer.last, /"gateway_code":"(invalid_upstream_response|overloaded)"/, `ended with its error (${answer.status})`);
  }
  t.ok(statuses.length > 0 && statuses.every((status) => status === 200), `/health throughout: ${statuses.join(',')}`);
  t.equal(exitCode(), undefined, 'the process is still running');
  t.notMatch(server.output(), /heap out of memory|FATAL ERROR/);
});
