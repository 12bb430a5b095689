// nativeRequest hands node the URL as its parts (protocol, hostname, port, path, auth), not as a URL (issue 40,
// line 5: node would keep href, search, pathname and hash beside them for the connection's life). What reaches a
// real server must be what node's own http.request(url) sends: request line, Host, Authorization.
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type RequestOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { nativeRequest } from '../../src/wire/native-request.js';

interface Seen {
  method: string;
  url: string;
  host: string | undefined;
  authorization: string | undefined;
}

async function startServer(host: string) {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    seen.push({ method: req.method!, url: req.url!, host: req.headers.host, authorization: req.headers.authorization });
    req.resume();
    res.end('ok');
  });
  server.listen(0, host);
  await once(server, 'listening');
  return { seen, port: (server.address() as AddressInfo).port, close: () => server.close() };
}

function send(make: () => ReturnType<typeof request>): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = make();
    req.on('response', (res) => res.resume().on('end', resolve));
    req.on('error', reject);
    req.end('{}');
  });
}

const ipv6 = await startServer('::1').then(
  (server) => server,
  () => null,
);
const ipv4 = await startServer('127.0.0.1');
t.teardown(() => {
  ipv4.close();
  ipv6?.close();
});

for (const [server, base] of [
  [ipv4, (port: number) => `http://127.0.0.1:${port}`],
  [ipv6, (port: number) => `http://[::1]:${port}`],
] as const) {
  if (!server) continue;
  for (const tail of ['/v1/chat/completions', '/v1/models?alt=sse&key=a%20b#frag', '/']) {
    for (const auth of ['', 'user:p%40ss@']) {
      const url = new URL(base(server.port).replace('//', `//${auth}`) + tail);
      t.test(`${url.href}: the same request line, Host and Authorization as http.request(url)`, async (t) => {
        const options: RequestOptions = { method: 'POST', headers: { 'content-type': 'application/json' }, timeout: undefined };
        server.seen.length = 0;
        await send(() => request(url, options));
        await send(() => nativeRequest(url, options));
        t.equal(server.seen.length, 2);
        t.same(server.seen[1], server.seen[0]);
        t.equal(server.seen[1]!.method, 'POST');
      });
    }
  }
}

t.test('a default port stays implicit in Host, as node sends it', async (t) => {
  const req = nativeRequest(new URL('http://localhost/v1/x?y=1'), { method: 'GET', agent: false });
  req.on('error', () => {});
  t.equal(req.getHeader('host'), 'localhost');
  t.equal(req.path, '/v1/x?y=1');
  req.destroy();
});
