import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SignedRequestSeen } from './sigv4-verify.js';

export interface SignedRequestServer {
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  /** Every request as it arrived: the request line's target, raw headers and the body's exact bytes. */
  readonly seen: SignedRequestSeen[];
  close(): Promise<void>;
}

/** A loopback node:http server that keeps each request exactly as sent (for signature checks) and answers with `answer`. */
export async function startSignedRequestServer(answer: (seen: SignedRequestSeen, res: ServerResponse) => void): Promise<SignedRequestServer> {
  const seen: SignedRequestSeen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method ?? '', target: req.url ?? '', rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) };
      seen.push(request);
      answer(request, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** AWS's answer to a request whose signature does not hold. */
export function refuseSignature(res: ServerResponse, reason: string): void {
  res.writeHead(403, { 'content-type': 'application/json', 'x-amzn-errortype': 'InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/' });
  res.end(JSON.stringify({ message: reason }));
}
