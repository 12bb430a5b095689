// The least a gateway of this design does per request (issue 25): got-proxy.ts behind Express 5 (the design keeps
// both), plus the work no gateway can skip: the caller's body read whole and parsed (the route comes from its
// model), the model rewritten and the body sent upstream through got (configured as got-proxy.ts), and a
// non-streamed answer read whole, parsed (its usage is what limits and cost count) and written again with its model
// set (to the upstream name, so that the bench's checks of a proxy hold; the same work as the routing string).
// Streams are piped as the got proxy pipes them. Nothing else: no request log, metrics, callers, failover,
// validation or bounds. So *gateway ÷ Express proxy* is what the gateway's own features cost, and
// *Express proxy ÷ got proxy* what the design costs before any of them.
import { Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import got from 'got';

const upstreamPort = Number(process.env['UPSTREAM_PORT']);
if (!Number.isInteger(upstreamPort) || upstreamPort <= 0) throw new Error('UPSTREAM_PORT must be set');

const agent = new Agent({ keepAlive: true, maxFreeSockets: 256, scheduling: 'lifo' });
const client = got.extend({
  prefixUrl: `http://127.0.0.1:${upstreamPort}`,
  method: 'POST',
  agent: { http: agent },
  retry: { limit: 0 },
  followRedirect: false,
  decompress: false,
  throwHttpErrors: false,
  http2: false,
  timeout: { connect: 10_000, response: 600_000 },
  headers: { 'content-type': 'application/json' },
});

function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

const app = express();
app.disable('x-powered-by');
app.post('/v1/chat/completions', async (req, res) => {
  const body = JSON.parse((await readAll(req)).toString()) as { model: string; stream?: boolean };
  body.model = body.model.slice(body.model.indexOf('/') + 1);
  const upstream = client.stream('v1/chat/completions', { body: Buffer.from(JSON.stringify(body)) });
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  const reply = await new Promise<{ statusCode: number; headers: Record<string, string | string[] | undefined> }>((resolve) => upstream.once('response', resolve));
  if (body.stream) {
    res.writeHead(reply.statusCode, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    upstream.pipe(res);
    return;
  }
  const answer = JSON.parse((await readAll(upstream)).toString()) as { model: string; usage?: unknown };
  answer.model = body.model;
  const text = JSON.stringify(answer);
  res.writeHead(reply.statusCode, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
});

const server = app.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
server.keepAliveTimeout = 65_000;
process.on('disconnect', () => process.exit(0));
