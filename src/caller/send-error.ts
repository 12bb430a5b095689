import type { ServerResponse } from 'node:http';
import type { GatewayError } from '../wire/gateway-error.js';

/** Writes the envelope as the whole response. The caller checks headersSent first. */
export function sendError(res: ServerResponse, error: GatewayError): void {
  const body = JSON.stringify({ error: error.body });
  res.statusCode = error.status;
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.setHeader('x-should-retry', error.retry ? 'true' : 'false');
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(body);
}
