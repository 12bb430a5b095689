// A hostile Anthropic stream against a gateway process with a 256 MiB heap (issue 19, items 1 and 2): what a
// stream makes the gateway hold is bounded per stream (MAX_UPSTREAM_BODY_BYTES of held text, MAX_OPEN_BLOCKS
// open blocks), so the stream ends with invalid_upstream_response and the process answers /health throughout.
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { MAX_OPEN_BLOCKS } from '../../src/dialects/anthropic/stream-blocks.js';
import { startMockUpstream } from '../helpers/mock-upstream.js';
import { startServerProcess } from './server-process.js';
import { startEventStream } from '../helpers/sse-upstream.js';

// Hundreds of MiB through a real process on a shared machine.
t.setTimeout(300_000);

const CHILD = fileURLToPath(new URL('./gateway-child.ts', import.meta.url));
const ROUTES = `version: 1
providers:
  claude: { dialect: anthropic, base_url: http://127.0.0.1:9/v1, base_url_env: CLAUDE_URL, api_key_env: CLAUDE_KEY }
models:
  claude/blocks: { upstream_model: claude-blocks-1, max_output_tokens: 64000 }
  claude/think: { upstream_model: claude-think-1, max_output_tokens: 64000, reasoning: budget }
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;
const MiB = 1024 * 1024;
const sse = (event: Record<string, unknown>) => `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`;
const MESSAGE_START = sse({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 5, output_tokens: 1 } } });

/** What the provider sent of each attack, in bytes, and whether it got to the end of it. */
const sent = { thinking: 0, blocks: 0, blocksFinished: false };

/** Writes `count` events after `head`, as fast as the gateway reads them, until done or the gateway lets go. */
async function pour(res: ServerResponse, head: string, eventAt: (i: number) => string, count: number, tail: string, onSent: (bytes: number) => void): Promise<boolean> {
  startEventStream(res);
  const closed = once(res, 'close');
  res.write(head);
  for (let i = 0; i < count; i++) {
    if (res.destroyed || res.writableEnded) return false;
    const event = eventAt(i);
    onSent(event.length);
    if (!res.write(event)) await Promise.race([once(res, 'drain'), closed]);
  }
  if (res.destroyed) return false;
  res.end(tail);
  return true;
}

/** 200 MiB of thinking in one block, in 256 KiB deltas (it killed the process: one 200 MiB thinking_blocks event in the making). */
async function thinkingAttack(res: ServerResponse): Promise<void> {
  const delta = sse({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'x'.repeat(256 * 1024) } });
  const head = MESSAGE_START + sse({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } });
  const tail = sse({ type: 'content_block_stop', index: 0 }) + sse({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }) + sse({ type: 'message_stop' });
  await pour(res, head, () => delta, 800, tail, (bytes) => (sent.thinking += bytes));
}

/** 300,000 tool_use blocks started and never stopped, each with its input given at the start; then the answer ends. */
async function blocksAttack(res: ServerResponse): Promise<void> {
  const input = { q: 'y'.repeat(300) };
  const eventAt = (i: number) => sse({ type: 'content_block_start', index: i, content_block: { type: 'tool_use', id: `toolu_${i}`, name: 'f', input } });
  const tail = sse({ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }) + sse({ type: 'message_stop' });
  sent.blocksFinished = await pour(res, MESSAGE_START, eventAt, 300_000, tail, (bytes) => (sent.blocks += bytes));
}

/** Reads a whole streamed answer; keeps only its size, status and last event. */
async function readAnswer(origin: string, model: string): Promise<{ status: number; bytes: number; last: string }> {
  const response = await fetch(`${origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'think' }], stream: true }),
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let bytes = 0;
  let tail = '';
  for (let part = await reader.read(); !part.done; part = await reader.read()) {
    bytes += part.value.length;
    tail = (tail + decoder.decode(part.value, { stream: true })).slice(-4096);
  }
  return { status: response.status, bytes, last: tail.trim().split('\n\n').at(-1) ?? '' };
}

t.test('under --max-old-space-size=256, a stream that holds too much ends with invalid_upstream_response and /health answers throughout', async (t) => {
  const provider = await startMockUpstream((request, res) => (request.body.includes('claude-blocks-1') ? blocksAttack(res) : thinkingAttack(res)));
  t.teardown(() => provider.close());
  const server = await startServerProcess(
    { CLAUDE_URL: `${provider.origin}/v1`, CLAUDE_KEY: 'sk-test-claude', GATEWAY_ROUTES_YAML: ROUTES },
    ['--max-old-space-size=256', '--import=tsx', CHILD],
  );
  t.teardown(() => server.child.kill('SIGKILL'));
  let exitCode: number | null | undefined;
  void server.exited.then((code) => (exitCode = code));

  /** Polls /health while `during` runs; every status seen (0: no answer). */
  const healthDuring = async <T>(during: Promise<T>): Promise<{ result: T; statuses: number[] }> => {
    const statuses: number[] = [];
    let done = false;
    const polling = (async () => {
      while (!done) {
        statuses.push(await fetch(`${server.origin}/health`, { signal: AbortSignal.timeout(10_000) }).then((r) => r.status, () => 0));
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    const result = await during.finally(() => (done = true));
    await polling;
    return { result, statuses };
  };

  const thinking = await healthDuring(readAnswer(server.origin, 'claude/think'));
  t.equal(thinking.result.status, 200, 'the stream had begun (its thinking was relayed as it came)');
  t.match(JSON.parse(thinking.result.last.replace(/^data: /, '')), { error: { gateway_code: 'invalid_upstream_response', provider: 'claude' } }, 'then ended with invalid_upstream_response');
  t.ok(sent.thinking < 200 * MiB, `the provider was cut off after ${(sent.thinking / MiB).toFixed(0)} MiB`);
  t.ok(thinking.statuses.length > 0 && thinking.statuses.every((status) => status === 200), `/health throughout: ${thinking.statuses.join(',')}`);

  const blocks = await healthDuring(readAnswer(server.origin, 'claude/blocks'));
  t.equal(blocks.result.status, 200, 'the stream had begun (each tool call was relayed as it started)');
  t.match(JSON.parse(blocks.result.last.replace(/^data: /, '')), { error: { gateway_code: 'invalid_upstream_response', message: new RegExp(`more than ${MAX_OPEN_BLOCKS} content blocks`) } });
  t.notOk(sent.blocksFinished, `the provider was cut off after ${(sent.blocks / MiB).toFixed(1)} MiB, before its message_stop`);
  t.ok(blocks.statuses.length > 0 && blocks.statuses.every((status) => status === 200), `/health throughout: ${blocks.statuses.join(',')}`);

  t.equal((await fetch(`${server.origin}/health`)).status, 200, '/health afterwards');
  t.equal(exitCode, undefined, 'the process is still running');
  t.notMatch(server.output(), /heap out of memory|FATAL ERROR/);
});
