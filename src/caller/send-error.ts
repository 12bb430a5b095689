import type { ServerResponse } from 'node:http';
import type { GatewayError } from '../wire/gateway-error.js';

/** Writes a gateway error as the whole response in one inbound format's shape. */
export type ErrorWriter = (res: ServerResponse, error: GatewayError) => void;

const errorWriters = new WeakMap<ServerResponse, ErrorWriter>();

/** Errors on this response leave in `writer`'s shape (an inbound format with an error shape of its own). */
export function useErrorWriter(res: ServerResponse, writer: ErrorWriter): void {
  errorWriters.set(res, writer);
}

/** Writes the envelope as the whole response (or the shape useErrorWriter chose). The caller checks headersSent first. */
export function sendError(res: ServerResponse, error: GatewayError): void {
  const writer = errorWriters.get(res);
  if (writer) {
    writer(res, error);
    return;
  }
  const body = JSON.stringify({ error: error.body });
  res.statusCode = error.status;
  for (const [name, value] of Object.entries(error.headers)) {
    // "Retry after 1 s" beside "do not retry" leaves SDKs to pick one: an answer that may not be retried carries no hint.
    if (!error.retry && name.toLowerCase().startsWith('retry-after')) continue;
    res.setHeader(name, value);
  }
  res.setHeader('x-should-retry', error.retry ? 'true' : 'false');
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(body);
}
