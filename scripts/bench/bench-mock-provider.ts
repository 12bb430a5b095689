// The provider for `npm run bench`: as cheap as node:http allows, so that its CPU never limits the targets.
// Run by bench.ts in its own process (forked, IPC), it imports nothing but node: built-ins.
//
// - Non-streamed request: one fixed chat.completion JSON (precomputed buffer, content-length).
// - Streamed request (`"stream":true` in the body): `max_tokens` chat.completion.chunk events (default 20)
//   then `data: [DONE]`, all written at once (one precomputed buffer, one chunked write). As OpenAI does,
//   when the request asks for usage (`"include_usage":true`, which the gateway adds by default), every chunk
//   carries `"usage":null` and a usage-only chunk precedes [DONE].
// - POST /v1/messages (the gateway's anthropic dialect): Anthropic's native answers. Streamed: message_start,
//   content_block_start, `max_tokens` content_block_delta text_delta events, content_block_stop, message_delta
//   with usage and message_stop, each as an `event:` line and a `data:` line (one precomputed buffer, one write);
//   the gateway turns these into max_tokens + 2 OpenAI chunks (role, the deltas, finish) and [DONE].
//   Non-streamed: one fixed `message`.
// - Keep-alive connections stay open for 10 minutes, so no pooled socket of a target is closed under it.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const UPSTREAM_MODEL = 'llama3.2';

const completion = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1763700000,
    model: UPSTREAM_MODEL,
    system_fingerprint: 'fp_bench',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today?', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 9, completion_tokens: 10, total_tokens: 19 },
  }),
);
const completionHeaders = { 'content-type': 'application/json', 'content-length': String(completion.length) };
const streamHeaders = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

function streamBody(events: number, withUsage: boolean): Buffer {
  const frames: string[] = [];
  for (let i = 0; i < events; i++) {
    const last = i === events - 1;
    const delta = i === 0 ? { role: 'assistant', content: '' } : last ? {} : { content: ` token${i}` };
    const chunk = {
      id: 'chatcmpl-bench',
      object: 'chat.completion.chunk',
      created: 1763700000,
      model: UPSTREAM_MODEL,
      system_fingerprint: 'fp_bench',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: last ? 'stop' : null }],
      ...(withUsage ? { usage: null } : {}),
    };
    frames.push(`data: ${JSON.stringify(chunk)}\n\n`);
  }
  if (withUsage) {
    const usage = { prompt_tokens: 9, completion_tokens: events, total_tokens: events + 9 };
    frames.push(`data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1763700000, model: UPSTREAM_MODEL, system_fingerprint: 'fp_bench', choices: [], usage })}\n\n`);
  }
  frames.push('data: [DONE]\n\n');
  return Buffer.from(frames.join(''));
}

const message = Buffer.from(
  JSON.stringify({
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model: 'claude-bench-1',
    content: [{ type: 'text', text: 'Hello! How can I help you today?' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 9, output_tokens: 10 },
  }),
);
const messageHeaders = { 'content-type': 'application/json', 'content-length': String(message.length) };

function anthropicStreamBody(deltas: number): Buffer {
  const frame = (event: Record<string, unknown>) => `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`;
  const frames = [
    frame({
      type: 'message_start',
      message: { id: 'msg_bench', type: 'message', role: 'assistant', model: 'claude-bench-1', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 9, output_tokens: 1 } },
    }),
    frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  ];
  for (let i = 0; i < deltas; i++) frames.push(frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ` token${i}` } }));
  frames.push(frame({ type: 'content_block_stop', index: 0 }));
  frames.push(frame({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: deltas } }));
  frames.push(frame({ type: 'message_stop' }));
  return Buffer.from(frames.join(''));
}

const anthropicStreams = new Map<number, Buffer>();
function cachedAnthropicStream(deltas: number): Buffer {
  let body = anthropicStreams.get(deltas);
  if (!body) anthropicStreams.set(deltas, (body = anthropicStreamBody(deltas)));
  return body;
}

const streams = new Map<number, Buffer>();
function cachedStream(events: number, withUsage: boolean): Buffer {
  const key = withUsage ? -events : events;
  let body = streams.get(key);
  if (!body) streams.set(key, (body = streamBody(events, withUsage)));
  return body;
}

const MAX_TOKENS = /"max_tokens":\s*(\d+)/;

const server = createServer({ keepAliveTimeout: 600_000, headersTimeout: 60_000, requestTimeout: 0 }, (req, res) => {
  let first: Buffer | undefined;
  let more: Buffer[] | undefined;
  req.on('data', (piece: Buffer) => {
    if (!first) first = piece;
    else (more ??= [first]).push(piece);
  });
  req.on('end', () => {
    const text = more ? Buffer.concat(more).toString('latin1') : (first?.toString('latin1') ?? '');
    if (req.url === '/v1/messages') {
      if (!text.includes('"stream":true')) {
        res.writeHead(200, messageHeaders);
        res.end(message);
        return;
      }
      res.writeHead(200, streamHeaders);
      res.end(cachedAnthropicStream(Math.min(100_000, Math.max(1, Number(MAX_TOKENS.exec(text)?.[1] ?? 20)))));
      return;
    }
    if (!text.includes('"stream":true')) {
      res.writeHead(200, completionHeaders);
      res.end(completion);
      return;
    }
    const events = Math.min(100_000, Math.max(2, Number(MAX_TOKENS.exec(text)?.[1] ?? 20)));
    res.writeHead(200, streamHeaders);
    res.end(cachedStream(events, text.includes('"include_usage":true')));
  });
});
server.keepAliveTimeout = 600_000;

server.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
// The bench went away (or is done): leave with it.
process.on('disconnect', () => process.exit(0));
