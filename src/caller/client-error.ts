import type { IncomingMessage, ServerResponse } from 'node:http';
import { STATUS_CODES, maxHeaderSize } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RequestHandler, Response } from 'express';
import { gatewayError, type GatewayError } from '../wire/gateway-error.js';
import { requestIdFor } from './request-id.js';
import { recordOf } from '../observe/request-log.js';
import { sendError } from './send-error.js';

export interface ClientTimeouts {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
}

/**
 * The http server's 'clientError' listener: what Node's parser refuses (a bad request line, headers over the
 * limit, a caller too slow to send) is answered as the envelope instead of Node's bare status line. Node leaves
 * the socket to its listener, so every path ends by destroying it, as Node itself does after its own answer.
 */
export function answerClientError(timeouts: ClientTimeouts): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return (error, socket) => {
    // Node's own fallback reads the same internal field: the response of the request being read, if any.
    const inFlight = (socket as { _httpMessage?: ServerResponse | null })._httpMessage ?? null;
    const answer = socket.writable && !inFlight?.headersSent ? clientErrorAnswer(error, timeouts) : null;
    if (answer && inFlight) answerInFlight(inFlight, answer);
    else if (answer) socket.write(rawResponse(answer));
    // Nothing more is read from this sender; a slow body would otherwise go on being parsed.
    socket.destroy();
  };
}

/** A request whose body was being read: answered through its own response, so its log line says what happened. */
function answerInFlight(res: ServerResponse, answer: GatewayError): void {
  const locals = (res as Partial<Response>).locals;
  if (locals?.['record']) recordOf(res as Response).gatewayCode = answer.body.gateway_code;
  res.setHeader('connection', 'close');
  sendError(res, answer);
}

/** The 'connect' listener: a CONNECT would otherwise get its socket closed without a word. */
export function refuseConnect(_req: IncomingMessage, socket: Duplex): void {
  if (socket.writable) {
    socket.write(rawResponse(gatewayError('method_not_allowed', 'CONNECT is not served: this gateway is not a proxy; the chat endpoint is POST /v1/chat/completions.')));
  }
  socket.destroy();
}

/** HTTP/1.1 requires Host (RFC 9112 §3.2); the server lets such requests through (requireHostHeader: false) so the refusal is an envelope. */
export const requireHostHeader: RequestHandler = (req, res, next) => {
  if (req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1 || req.headers.host !== undefined) return next();
  // Whatever follows on this connection comes from the same broken sender.
  res.setHeader('connection', 'close');
  next(gatewayError('malformed_request', 'The request is not valid HTTP/1.1: it has no Host header.'));
};

function clientErrorAnswer(error: NodeJS.ErrnoException, { headersTimeoutMs, requestTimeoutMs }: ClientTimeouts): GatewayError | null {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return gatewayError(
        'request_timeout',
        `The request was not received in time: headers are due within ${headersTimeoutMs} ms, the whole request within ${requestTimeoutMs} ms.`,
      );
    case 'HPE_HEADER_OVERFLOW':
      return gatewayError('headers_too_large', `The request's headers are larger than ${maxHeaderSize} bytes.`);
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return gatewayError('request_too_large', "The request's chunk extensions are too large.");
    case 'HPE_PAUSED_H2_UPGRADE':
      return gatewayError('malformed_request', 'HTTP/2 without TLS is not served; send HTTP/1.1.');
  }
  // Anything else from the parser is malformed HTTP; its code (a fixed llhttp name) helps the sender find the fault.
  if (typeof error.code === 'string' && /^HPE_[A-Z0-9_]{1,60}$/.test(error.code)) {
    return gatewayError('malformed_request', `The request is not valid HTTP/1.1 (${error.code}).`);
  }
  // A socket error (ECONNRESET, EPIPE, …): nobody is there to read an answer.
  return null;
}

function rawResponse(error: GatewayError): string {
  const body = JSON.stringify({ error: error.body });
  return (
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\n` +
    'content-type: application/json; charset=utf-8\r\n' +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    `x-should-retry: ${error.retry}\r\n` +
    `x-request-id: ${requestIdFor(undefined)}\r\n` +
    'connection: close\r\n\r\n' +
    body
  );
}
