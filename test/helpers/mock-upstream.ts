import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the mock provider received, exactly. */
export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export type UpstreamHandler = (request: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export interface MockUpstream {
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  readonly requests: RecordedRequest[];
  /** Connections that closed, in order; lets a test see the gateway hang up. */
  readonly closedConnections: number;
  /** Connections accepted so far; lets a test see the gateway reuse one. */
  readonly openedConnections: number;
  close(): Promise<void>;
}

/** A real node:http provider on port 0 that records every request and answers with `handler`. */
export async function startMockUpstream(handler: UpstreamHandler): Promise<MockUpstream> {
  const requests: RecordedRequest[] = [];
  let closedConnections = 0;
  let openedConnections = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(request);
      void Promise.resolve(handler(request, res)).catch((error: unknown) => {
        res.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  server.on('connection', (socket) => {
    openedConnections++;
    socket.on('close', () => closedConnections++);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    get closedConnections() {
      return closedConnections;
    },
    get openedConnections() {
      return openedConnections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** A chat.completion body as OpenAI sends it, with the upstream's own model name. */
export function completionBody(upstreamModel: string, content = 'Hello there!') {
  return {
    id: 'chatcmpl-abc123',
    object: 'chat.completion',
    created: 1_763_700_000,
    model: upstreamModel,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: 12,
      completion_tokens: 3,
      total_tokens: 15,
      prompt_tokens_details: { cached_tokens: 4, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0, audio_tokens: 0 },
    },
    system_fingerprint: 'fp_44709d6fcb',
    service_tier: 'default',
  };
}
