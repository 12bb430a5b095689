import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventMessage, exceptionMessage } from './event-stream-encoder.js';

/** One request as Bedrock saw it. */
export interface BedrockCall {
  readonly method: string;
  /** The path exactly as sent (percent-encoding kept), with any query. */
  readonly rawPath: string;
  /** The model id, decoded. */
  readonly modelId: string;
  readonly stream: boolean;
  readonly headers: IncomingHttpHeaders;
  /** The body's bytes exactly as sent. */
  readonly bodyBytes: Buffer;
  /** The body, parsed (`{}` when it is not JSON). */
  readonly body: Record<string, unknown>;
}

/** One ConverseStream event (`{contentBlockDelta: {…}}`) or exception (`{exception: 'throttlingException', message}`). */
export type StreamEvent = { readonly [type: string]: Record<string, unknown> } | { readonly exception: string; readonly message: string };

/** What the mock answers: a JSON body (an error with its x-amzn-errortype), events as event-stream messages cut into pieces, or raw bytes. */
export type BedrockAnswer =
  | { readonly status?: number; readonly json: unknown; readonly errorType?: string; readonly headers?: Record<string, string> }
  | { readonly events: readonly StreamEvent[]; readonly cuts?: readonly number[]; readonly pieceSize?: number; readonly contentType?: string }
  | { readonly bytes: Buffer; readonly cuts?: readonly number[]; readonly pieceSize?: number; readonly contentType?: string; readonly hold?: boolean };

export interface MockBedrock {
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  readonly calls: BedrockCall[];
  /** Every way a request broke Bedrock's wire contract; empty when all were right. */
  readonly violations: string[];
  close(): Promise<void>;
}

export interface MockBedrockOptions {
  /** The Bedrock API key every request must carry as `Authorization: Bearer <key>`; absent: none is checked. */
  readonly bearer?: string;
  /** Checks a request's signature (auth: aws): a message refuses it with 403 as AWS does. */
  readonly verify?: (req: IncomingMessage, bodyBytes: Buffer) => string | undefined;
}

const PATH = /^\/(?:[^?]*\/)?model\/([^/?]+)\/(converse|converse-stream)$/;
/** Members of a ConverseRequest body (the model is in the path). */
const CONVERSE_MEMBERS = new Set(['messages', 'system', 'inferenceConfig', 'toolConfig', 'guardrailConfig', 'additionalModelRequestFields', 'promptVariables', 'additionalModelResponseFieldPaths', 'requestMetadata', 'performanceConfig']);

/**
 * A real node:http server speaking Bedrock's Converse and ConverseStream: POST {base}/model/{modelId}/converse
 * or /converse-stream, the model id percent-encoded in one segment. Answers `answer(call, n)` for the n-th
 * request; an event stream is sent as application/vnd.amazon.eventstream, cut at `cuts` (byte offsets) or into
 * `pieceSize`-byte writes.
 */
export async function startMockBedrock(answer: (call: BedrockCall, n: number) => BedrockAnswer, options: MockBedrockOptions = {}): Promise<MockBedrock> {
  const calls: BedrockCall[] = [];
  const violations: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const bodyBytes = Buffer.concat(chunks);
      const call = check(req, bodyBytes, violations, options.bearer);
      calls.push(call);
      const refusal = options.verify?.(req, bodyBytes);
      if (refusal !== undefined) {
        sendError(res, 403, 'InvalidSignatureException', { message: refusal });
        return;
      }
      void send(res, answer(call, calls.length - 1)).catch((error: unknown) => res.destroy(error as Error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    violations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function check(req: IncomingMessage, bodyBytes: Buffer, violations: string[], bearer: string | undefined): BedrockCall {
  const expect = (ok: boolean, what: string) => void (ok || violations.push(what));
  const rawPath = req.url ?? '';
  const path = PATH.exec(rawPath);
  expect(req.method === 'POST' && path !== null, `${req.method} ${rawPath}`);
  expect(!rawPath.includes('?'), 'a query string was sent');
  expect(req.headers['content-type'] === 'application/json', `content-type ${req.headers['content-type']}`);
  if (bearer !== undefined) {
    expect(req.headers['authorization'] === `Bearer ${bearer}`, 'authorization is not the Bedrock API key');
    for (const name of ['x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256']) expect(req.headers[name] === undefined, `${name} sent with a Bedrock API key`);
  }
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(bodyBytes.toString('utf8')) as Record<string, unknown>;
  } catch {
    violations.push('the body is not JSON');
  }
  expect(Array.isArray(body['messages']), 'no messages');
  for (const key of Object.keys(body)) expect(CONVERSE_MEMBERS.has(key), `not a ConverseRequest member: ${key}`);
  let modelId = '';
  try {
    modelId = decodeURIComponent(path?.[1] ?? '');
  } catch {
    violations.push('the model id is not percent-encoded');
  }
  return { method: req.method ?? '', rawPath, modelId, stream: path?.[2] === 'converse-stream', headers: req.headers, bodyBytes, body };
}

function sendError(res: ServerResponse, status: number, errorType: string, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': `${errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function send(res: ServerResponse, answer: BedrockAnswer): Promise<void> {
  if ('json' in answer) {
    const status = answer.status ?? 200;
    if (answer.errorType) return sendError(res, status, answer.errorType, answer.json);
    const text = JSON.stringify(answer.json);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...answer.headers });
    res.end(text);
    return;
  }
  const bytes = 'bytes' in answer ? answer.bytes : Buffer.concat(answer.events.map(encodeEvent));
  res.writeHead(200, { 'content-type': answer.contentType ?? 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'req-bedrock-1' });
  res.flushHeaders();
  for (const piece of piecesOf(bytes, answer.cuts, answer.pieceSize)) {
    res.write(piece);
    // A pause between writes, so the gateway sees them as separate reads.
    await sleep(2);
  }
  if ('hold' in answer && answer.hold) return;
  res.end();
}

export function encodeEvent(event: StreamEvent): Buffer {
  if ('exception' in event && typeof event.exception === 'string') return exceptionMessage(event.exception, String(event.message));
  const [type, payload] = Object.entries(event)[0]!;
  return eventMessage(type, payload as Record<string, unknown>);
}

/** The bytes cut at each offset of `cuts`, or into `size`-byte pieces, or whole. */
export function piecesOf(bytes: Buffer, cuts?: readonly number[], size?: number): Buffer[] {
  const offsets = cuts ? [...cuts] : size ? Array.from({ length: Math.ceil(bytes.length / size) - 1 }, (_, i) => (i + 1) * size) : [];
  const pieces: Buffer[] = [];
  let from = 0;
  for (const at of [...offsets.filter((at) => at > 0 && at < bytes.length), bytes.length]) {
    pieces.push(bytes.subarray(from, at));
    from = at;
  }
  return pieces;
}

/** A Converse answer of one text block. */
export function textAnswer(text: string, usage: Record<string, number> = USAGE, stopReason = 'end_turn'): Record<string, unknown> {
  return { output: { message: { role: 'assistant', content: [{ text }] } }, stopReason, usage, metrics: { latencyMs: 120 } };
}

export const USAGE = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };

/** The events of a streamed text answer, with its usage in metadata. */
export function textEvents(pieces: readonly string[], usage: Record<string, number> = USAGE, stopReason = 'end_turn'): StreamEvent[] {
  return [
    { messageStart: { role: 'assistant' } },
    ...pieces.map((text) => ({ contentBlockDelta: { contentBlockIndex: 0, delta: { text } } })),
    { contentBlockStop: { contentBlockIndex: 0 } },
    { messageStop: { stopReason } },
    { metadata: { usage, metrics: { latencyMs: 120 } } },
  ];
}
