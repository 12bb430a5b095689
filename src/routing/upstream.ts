import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { RequestError, TimeoutError } from 'got';
import type { OutgoingRequest } from '../dialects/dialect.js';
import { gatewayError, type GatewayError } from '../wire/gateway-error.js';
import { flatLatin1 } from '../wire/flat-copy.js';
import { letGoWhenDone } from './let-go-when-done.js';
import type { RuntimeEndpoint, RuntimeProvider } from './runtime-providers.js';

/** The provider's status and headers; `body` is still to be read. */
export interface UpstreamReply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Readable;
}

export interface UpstreamCall {
  /** Resolves when response headers arrive; rejects with the gateway's 502 when the provider did not answer. */
  readonly reply: Promise<UpstreamReply>;
  /**
   * Stops the request at once (the caller went away, a drain ran out of grace): the provider stops
   * generating, and whatever waits for the reply or reads its body fails with `reason`, so it settles.
   */
  abort(reason: GatewayError): void;
  /** The reason given to the first abort, if any. */
  readonly abortedWith: GatewayError | undefined;
}

/**
 * Sends one request. `timeout_ms` bounds the whole response for a non-streamed call and the
 * response headers for a streamed one (the stream has its own idle limit).
 */
export function callUpstream(
  provider: RuntimeProvider,
  endpoint: RuntimeEndpoint,
  outgoing: OutgoingRequest,
  requestId: string,
  via: string,
  streamed: boolean,
  /** Headers of this attempt only: its trace context, an AWS signature. */
  callHeaders?: Readonly<Record<string, string>>,
): UpstreamCall {
  const client = streamed ? endpoint.clients.streamed : endpoint.clients.whole;
  // The provider's fixed headers (auth included) are in the client; a dialect may add some per call, tracing its traceparent.
  // Via on every call (RFC 9110): a request that comes back to this gateway, or to another that forwards Via, is refused as a loop.
  const headers = outgoing.headers ? { ...outgoing.headers, 'x-request-id': requestId, via } : { 'x-request-id': requestId, via };
  if (callHeaders) Object.assign(headers, callHeaders);
  // A Buffer, not a string: got measures a string body by encoding it once more (TextEncoder) and again after writing it.
  const body = typeof outgoing.body === 'string' ? Buffer.from(outgoing.body) : outgoing.body;
  // Here the request is final: URL = endpoint.baseUrl + '/' + outgoing.path (got's prefixUrl, path sent as is),
  // headers = the client's fixed ones + `headers`, body = `body`'s exact bytes. An auth: aws signature of these same
  // parts (attempt.ts) arrives in callHeaders; x-request-id and Via are left unsigned on purpose.
  // client(…, {isStream}) rather than client.stream(…), which copies these options once more to add the flag.
  const request = client(outgoing.path, { isStream: true, body, headers });
  letGoWhenDone(request);
  let abortedWith: GatewayError | undefined;
  const reply = new Promise<UpstreamReply>((resolve, reject) => {
    // Plain listeners (got emits each at most once): an error after the reply only rejects a settled promise, so it never goes unhandled.
    request.on('response', (response: { statusCode: number; headers: IncomingHttpHeaders }) => {
      // got reads the options it gave node only to make the request (and again for a retry or a redirect, which
      // it is told not to make); a stream would keep them, one object of ~45 keys, for as long as it is open.
      const held = request as unknown as { _requestOptions: unknown; _requestId: unknown };
      held._requestOptions = undefined;
      // Its request id (randomUUID: ~12 pieces joined) too lives as long as a stream: 0.4 KB as it is, 0.1 KB flat.
      if (streamed && typeof held._requestId === 'string') held._requestId = flatLatin1(held._requestId);
      resolve({ status: response.statusCode, headers: response.headers, body: request });
    });
    request.on('error', (error: Error) => reject(abortedWith ?? upstreamFailure(provider, error)));
  });
  return {
    reply,
    // Destroyed with an error, never without: a bare destroy() emits neither 'response', 'end' nor 'error',
    // and everything waiting on the request (with the request body it holds) would wait forever.
    abort(reason) {
      if (abortedWith || request.destroyed) return;
      abortedWith = reason;
      request.destroy(reason);
    },
    get abortedWith() {
      return abortedWith;
    },
  };
}

/** A failure of the transport (not an HTTP status) as the gateway's envelope. */
export function upstreamFailure(provider: RuntimeProvider, error: Error): GatewayError {
  const code = error instanceof RequestError ? error.code : undefined;
  const timedOutAt = error instanceof TimeoutError ? error.event : undefined;
  if (timedOutAt === 'connect' || timedOutAt === 'secureConnect') {
    return gatewayError(
      'upstream_connect_timeout',
      `The provider "${provider.id}" did not complete a connection within ${provider.table.connectTimeoutMs} ms (connect_timeout_ms).`,
      { provider: provider.id },
    );
  }
  if (code === 'ETIMEDOUT') {
    return gatewayError('upstream_timeout', `The provider "${provider.id}" did not answer within ${provider.table.timeoutMs} ms (timeout_ms).`, {
      provider: provider.id,
    });
  }
  const reason = code && /^[A-Z_]{2,40}$/.test(code) ? ` (${code})` : '';
  return gatewayError('upstream_unreachable', `The provider "${provider.id}" could not be reached or closed the connection${reason}.`, {
    provider: provider.id,
  });
}
