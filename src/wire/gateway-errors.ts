/**
 * Every error the gateway itself answers, in one table keyed by gateway_code.
 * `retry` becomes x-should-retry: true only where trying the same request again can help.
 * Statuses are chosen for the exception an OpenAI SDK raises from them (400 BadRequest, 404 NotFound,
 * 413/415 as APIError, >= 500 InternalServer, and those are the only ones its retry loop repeats).
 */
export const GATEWAY_ERRORS = {
  invalid_json: { status: 400, type: 'invalid_request_error', code: 'invalid_json', retry: false },
  invalid_request: { status: 400, type: 'invalid_request_error', code: 'invalid_request', retry: false },
  // Refused by Node's HTTP parser before any route ran (answered from the server's clientError event).
  malformed_request: { status: 400, type: 'invalid_request_error', code: 'malformed_request', retry: false },
  missing_provider_prefix: { status: 400, type: 'invalid_request_error', code: 'model_not_found', retry: false },
  unknown_model: { status: 400, type: 'invalid_request_error', code: 'model_not_found', retry: false },
  // Valid JSON, but deeper or with more values than MAX_JSON_DEPTH / MAX_JSON_VALUES allow: refused before parsing.
  request_too_complex: { status: 400, type: 'invalid_request_error', code: 'request_too_complex', retry: false },
  // A valid request asking for what the routed provider cannot give (e.g. logprobs from a model without them): refused, never dropped.
  unsupported_parameter: { status: 400, type: 'invalid_request_error', code: 'unsupported_parameter', retry: false },
  unauthorized: { status: 401, type: 'authentication_error', code: 'invalid_api_key', retry: false },
  // A named caller (routes.yaml callers:) asking for a model on the roster it was not given.
  model_not_allowed: { status: 403, type: 'permission_error', code: 'model_not_allowed', retry: false },
  not_found: { status: 404, type: 'invalid_request_error', code: 'not_found', retry: false },
  method_not_allowed: { status: 405, type: 'invalid_request_error', code: 'method_not_allowed', retry: false },
  // The caller sent too slowly (HEADERS_TIMEOUT_MS / REQUEST_TIMEOUT_MS); a passing stall may not recur.
  request_timeout: { status: 408, type: 'invalid_request_error', code: 'request_timeout', retry: true },
  request_too_large: { status: 413, type: 'invalid_request_error', code: 'request_too_large', retry: false },
  unsupported_media_type: { status: 415, type: 'invalid_request_error', code: 'unsupported_media_type', retry: false },
  headers_too_large: { status: 431, type: 'invalid_request_error', code: 'headers_too_large', retry: false },
  // A caller over one of its limits (type "requests" or "tokens", as OpenAI's): retry-after says when it admits again.
  caller_rate_limited: { status: 429, type: 'requests', code: 'rate_limit_exceeded', retry: true },
  // A caller over its budget for the UTC month or day: no retry helps until the period turns.
  quota_exceeded: { status: 429, type: 'insufficient_quota', code: 'insufficient_quota', retry: false },
  // The caller closed the connection while sending: nobody reads this answer; 499 marks it in logs and metrics.
  caller_disconnected: { status: 499, type: 'invalid_request_error', code: 'caller_disconnected', retry: false },
  internal_error: { status: 500, type: 'server_error', code: 'internal_error', retry: false },
  provider_not_configured: { status: 500, type: 'server_error', code: 'provider_not_configured', retry: false },
  upstream_unreachable: { status: 502, type: 'server_error', code: 'upstream_unreachable', retry: true },
  upstream_connect_timeout: { status: 502, type: 'server_error', code: 'upstream_connect_timeout', retry: true },
  upstream_timeout: { status: 502, type: 'server_error', code: 'upstream_timeout', retry: true },
  invalid_upstream_response: { status: 502, type: 'server_error', code: 'invalid_upstream_response', retry: true },
  // Streams: sent as the final event after the 200, so `status` only says what they would be before it.
  upstream_stream_interrupted: { status: 502, type: 'server_error', code: 'upstream_stream_interrupted', retry: true },
  upstream_stream_timeout: { status: 502, type: 'server_error', code: 'upstream_stream_timeout', retry: true },
  // The request already passed through this gateway (its id in Via): a provider base URL leads back here. Never retried.
  loop_detected: { status: 508, type: 'server_error', code: 'loop_detected', retry: false },
  // Draining past SHUTDOWN_GRACE_MS: another instance can take the retry.
  shutting_down: { status: 503, type: 'server_error', code: 'shutting_down', retry: true },
  // The request bodies in flight hold all of MAX_BODY_BYTES_IN_FLIGHT: a moment later, or another instance, can take it.
  overloaded: { status: 503, type: 'server_error', code: 'overloaded', retry: true },
  // A provider whose credentials are an access token (auth: google) has none valid now; the provider was not called.
  provider_auth_failed: { status: 503, type: 'server_error', code: 'provider_auth_failed', retry: true },
} as const satisfies Record<string, { status: number; type: string; code: string; retry: boolean }>;

export type GatewayErrorCode = keyof typeof GATEWAY_ERRORS;
