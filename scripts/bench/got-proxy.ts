// The floor for a gateway that must call its provider through got (issue 5 keeps got): raw-proxy.ts with
// the upstream call made by got.stream, configured as the gateway configures it (every fixed option in
// got.extend at start-up: no retries, no redirects, no decompression, keep-alive agent, timeouts). Nothing is
// parsed or rewritten, so what it spends beyond the raw proxy is got's own work per call.
// Run by `npm run bench:instructions`, transpiled to plain JavaScript inside node_modules/.cache so that
// `got` resolves from the project's node_modules.
import { Agent, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import got from 'got';

const upstreamPort = Number(process.env['UPSTREAM_PORT']);
if (!Number.isInteger(upstreamPort) || upstreamPort <= 0) throw new Error('UPSTREAM_PORT must be set');

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

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const upstream = client.stream((req.url ?? '/').slice(1), {
    headers: { 'content-type': req.headers['content-type'], 'content-length': req.headers['content-length'] },
  });
  upstream.on('response', (upstreamRes: { statusCode: number; headers: Record<string, string | string[] | undefined> }) => {
    res.writeHead(upstreamRes.statusCode, upstreamRes.headers);
    upstream.pipe(res);
  });
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
});

server.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
process.on('disconnect', () => process.exit(0));
