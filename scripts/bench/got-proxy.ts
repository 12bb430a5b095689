// Two of the bench's targets, sharing one got configuration (as the gateway configures it: every fixed option in
// got.extend at start-up: no retries, no redirects, no decompression, keep-alive agent, timeouts).
//
// The got proxy (default): raw-proxy.ts with the upstream call made by got.stream, the floor for a gateway that
// must call its provider through got (issue 5 keeps got). Nothing is parsed or rewritten, so what it spends
// beyond the raw proxy is got's own work per call.
//
// The Express proxy (PROXY_FRONT=express): the least a gateway of this design does per request (issue 25): the
// got proxy behind Express 5 (the design keeps both), plus the work no gateway can skip: the caller's body read
// whole and parsed (the route comes from its model), the model rewritten and the body sent upstream, and a
// non-streamed answer read whole, parsed (its usage is what limits and cost count) and written again with its
// model set (to the upstream name, so that the bench's checks of a proxy hold; the same work as the routing
// string). Streams are piped as the got proxy pipes them. Nothing else: no request log, metrics, callers,
// failover, validation or bounds. So *gateway ÷ Express proxy* is what the gateway's own features cost, and
// *Express proxy ÷ got proxy* what the design costs before any of them.
//
// Run by `npm run bench` and `npm run bench:instructions`, transpiled to plain JavaScript inside
// node_modules/.cache so that `got` and `express` resolve from the project's node_modules.
import { Agent, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import got from 'got';

const upstreamPort = Number(process.env['UPSTREAM_PORT']);
if (!Number.isInteger(upstreamPort) || upstreamPort <= 0) throw new Error('UPSTREAM_PORT must be set');
const front = process.env['PROXY_FRONT'] ?? 'node';
if (front !== 'node' && front !== 'express') throw new Error('PROXY_FRONT must be node or express');

// No cap on sockets (as the gateway's agent has none): bench:streams holds thousands of streams open at once.
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
});
type Upstream = ReturnType<typeof client.stream>;
type UpstreamHead = { statusCode: number; headers: Record<string, string | string[] | undefined> };

/** A 502 when the upstream fails; the upstream call aborted when the caller leaves. */
function guard(upstream: Upstream, res: ServerResponse): void {
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
}

function passThrough(req: IncomingMessage, res: ServerResponse): void {
  const upstream = client.stream((req.url ?? '/').slice(1), {
    headers: { 'content-type': req.headers['content-type'], 'content-length': req.headers['content-length'] },
  });
  upstream.on('response', (head: UpstreamHead) => {
    res.writeHead(head.statusCode, head.headers);
    upstream.pipe(res);
  });
  guard(upstream, res);
  req.pipe(upstream);
}

function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** Express is loaded only for the Express proxy: the got proxy's process stays as it was. */
async function expressApp(): Promise<(req: IncomingMessage, res: ServerResponse) => void> {
  const { default: express } = await import('express');
  const app = express();
  app.disable('x-powered-by');
  app.post('/v1/chat/completions', parsingRoute);
  return app;
}

async function parsingRoute(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = JSON.parse((await readAll(req)).toString()) as { model: string; stream?: boolean };
  body.model = body.model.slice(body.model.indexOf('/') + 1);
  const upstream = client.stream('v1/chat/completions', { headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(body)) });
  guard(upstream, res);
  // An upstream error settles this too: guard() has answered 502 by then.
  const head = await once(upstream, 'response').then(([response]) => response as UpstreamHead, () => undefined);
  if (head === undefined) return;
  if (body.stream) {
    res.writeHead(head.statusCode, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    upstream.pipe(res);
    return;
  }
  const answer = JSON.parse((await readAll(upstream)).toString()) as { model: string };
  answer.model = body.model;
  const text = JSON.stringify(answer);
  res.writeHead(head.statusCode, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = createServer({ keepAliveTimeout: 65_000 }, front === 'express' ? await expressApp() : passThrough);
server.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
process.on('disconnect', () => process.exit(0));
