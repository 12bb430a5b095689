import type { ServerResponse } from 'node:http';
import type { ErrorBody } from '../../generated/types/error-envelope.js';
import type { GatewayError } from '../../wire/gateway-error.js';

/** Anthropic's error type for a status, as its SDKs expect. */
const TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

/** The provider (or the gateway itself) is overloaded: Anthropic says so with 529 overloaded_error, which its clients retry. */
function isOverloaded(body: ErrorBody): boolean {
  return body.gateway_code === 'overloaded' || body.provider_status === 529 || body.provider_code === 'overloaded_error';
}

/** The status and the `{"type":"error","error":{…}}` body Anthropic's clients read; the envelope's fields stay inside `error`. */
export function anthropicError(status: number, body: ErrorBody): { status: number; text: string } {
  const answered = isOverloaded(body) ? 529 : status;
  const type = TYPES[answered] ?? (answered >= 500 ? 'api_error' : 'invalid_request_error');
  const { type: _openaiType, message, ...fields } = body;
  return { status: answered, text: JSON.stringify({ type: 'error', error: { type, message, ...fields } }) };
}

/** Writes the gateway's error in Anthropic's shape as the whole response (every error on /v1/messages routes). */
export function sendAnthropicError(res: ServerResponse, error: GatewayError): void {
  const { status, text } = anthropicError(error.status, error.body);
  res.statusCode = status;
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.setHeader('x-should-retry', error.retry || status === 529 ? 'true' : 'false');
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(text));
  res.end(text);
}

/** An error event ending a Messages stream. */
export function anthropicErrorEvent(body: ErrorBody): string {
  return `event: error\ndata: ${anthropicError(500, body).text}\n\n`;
}
