// A local OTLP/HTTP endpoint for `npm run bench:tracing`: the gateway exports its traces and metrics to it.
import { createServer } from 'node:http';

/** A local OTLP/HTTP endpoint that reads every export and answers 200, counting what it was sent. */
export async function startOtlpSink(host: string): Promise<{ origin: string; requests: () => number; bytes: () => number }> {
  let requests = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    requests++;
    req.on('data', (part: Buffer) => (bytes += part.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  server.unref();
  return { origin: `http://${host}:${(server.address() as { port: number }).port}`, requests: () => requests, bytes: () => bytes };
}
