// The provider for `npm run bench:streams`: an OpenAI-style chat-completions server that paces its stream as a
// model does, one chunk every PACE_MS (streams.ts sets it), so that thousands of streams stay open at once. Forked by
// streams.ts (IPC), it imports nothing but node: built-ins.
//
// A streamed request gets a role chunk, `max_tokens` content chunks, a finish chunk and `data: [DONE]`; when the
// request asks for usage (the gateway always does), every chunk carries `"usage":null` and a usage chunk precedes
// [DONE], as OpenAI sends them. Each content chunk's text is the provider's monotonic clock in µs when it wrote
// the chunk (CLOCK_MONOTONIC, which every process on the machine shares), so the caller can subtract the gap the
// provider made from the gap it saw. Each stream has its own timer, started when its request arrives, so the
// streams' phases spread as they open.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const PACE_MS = Number(process.env['PACE_MS'] ?? 100);
const FIELDS = '"id":"chatcmpl-paced","object":"chat.completion.chunk","created":1763700000,"model":"llama3.2","system_fingerprint":"fp_paced"';
const streamHeaders = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
const MAX_TOKENS = /"max_tokens":\s*(\d+)/;
const nowMicros = () => Number(process.hrtime.bigint() / 1000n);

const chunk = (delta: string, finish: string, usage: string) => `data: {${FIELDS},"choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}]${usage}}\n\n`;

const server = createServer({ keepAliveTimeout: 600_000, headersTimeout: 60_000, requestTimeout: 0 }, (req, res) => {
  let text = '';
  req.setEncoding('latin1');
  req.on('data', (piece: string) => (text += piece));
  req.on('end', () => {
    const events = Math.min(100_000, Math.max(1, Number(MAX_TOKENS.exec(text)?.[1] ?? 20)));
    const usage = text.includes('"include_usage":true') ? ',"usage":null' : '';
    res.writeHead(200, streamHeaders);
    res.write(chunk('{"role":"assistant","content":""}', 'null', usage));
    let sent = 0;
    const timer = setInterval(() => {
      if (res.destroyed) {
        clearInterval(timer);
        return;
      }
      if (sent < events) {
        sent++;
        res.write(chunk(`{"content":"${nowMicros()}"}`, 'null', usage));
        return;
      }
      clearInterval(timer);
      let tail = chunk('{}', '"stop"', usage);
      if (usage) tail += `data: {${FIELDS},"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":${events},"total_tokens":${events + 9}}}\n\n`;
      res.end(`${tail}data: [DONE]\n\n`);
    }, PACE_MS);
    res.on('close', () => clearInterval(timer));
  });
});

server.listen({ port: 0, host: '127.0.0.1', backlog: 8192 }, () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
process.on('disconnect', () => process.exit(0));
