// The baseline for `npm run bench`: the thinnest Node pass-through proxy there is. A node:http server;
// each request goes to the upstream (UPSTREAM_PORT on 127.0.0.1) through one keep-alive http.Agent with
// the caller's method, path and headers; request and response bytes are piped, nothing is parsed or
// rewritten. The only extras any real proxy needs: a 502 when the upstream fails, and aborting the
// upstream request when the caller goes away. It imports nothing but node: built-ins, and bench.ts runs it
// transpiled to plain JavaScript (no loader), like the gateway's dist/.
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

const upstreamPort = Number(process.env['UPSTREAM_PORT']);
if (!Number.isInteger(upstreamPort) || upstreamPort <= 0) throw new Error('UPSTREAM_PORT must be set');

// No cap on sockets (as the gateway's agent has none): bench:streams holds thousands of streams open at once.
const agent = new Agent({ keepAlive: true, maxFreeSockets: 256, scheduling: 'lifo' });

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const upstream = request({ host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers, agent }, (upstreamRes) => {
    res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
    upstreamRes.pipe(res);
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
