import type { RequestHandler } from 'express';

/** Origins a browser page may call the gateway from: exact origins, or '*' for any. An empty list is off. */
export type CorsOrigins = '*' | readonly string[];

/** What a browser may read from an answer besides the safelisted headers: what an OpenAI SDK reads, and which route served. */
const EXPOSED_HEADERS = [
  'x-request-id', 'x-should-retry', 'retry-after', 'retry-after-ms', 'x-gateway-served-by',
  // A deprecated model's headers (docs/deprecating-a-model.md).
  'deprecation', 'sunset', 'x-gateway-replacement',
  // A named caller's limits (docs/callers.md), so a browser SDK can back off by them too.
  'x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens',
].join(', ');
/** Always allowed on the chat endpoint: the caller key, the JSON body, the caller's own request id. */
const BASE_ALLOWED_HEADERS = ['authorization', 'content-type', 'x-request-id'];
/** Chrome caps a cached preflight at 2 hours; longer is wasted. */
const PREFLIGHT_MAX_AGE_S = 7200;
const CHAT_PATH = '/v1/chat/completions';
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]{1,64}$/;

/**
 * Opt-in CORS (CORS_ORIGINS). Runs before caller auth: a browser sends its preflight without the key. The
 * preflight of POST /v1/chat/completions is answered 204; every other answer to an allowed origin, errors
 * included, carries Access-Control-Allow-Origin so the page can read the envelope. A disallowed origin gets
 * no CORS header, and no other difference: CORS guards browsers' users, it is not an access check.
 */
export function cors(origins: CorsOrigins): RequestHandler {
  const exact = origins === '*' ? null : new Set(origins);
  return (req, res, next) => {
    // The answer depends on Origin when origins are listed: caches must keep one copy per origin.
    if (exact) res.vary('Origin');
    const origin = req.headers.origin;
    if (origin === undefined || (exact && !exact.has(origin))) return next();
    res.setHeader('access-control-allow-origin', exact ? origin : '*');
    if (req.method === 'OPTIONS' && req.path === CHAT_PATH && req.headers['access-control-request-method'] === 'POST') {
      res.vary('Access-Control-Request-Headers');
      res.setHeader('access-control-allow-methods', 'POST');
      res.setHeader('access-control-allow-headers', allowedHeaders(req.headers['access-control-request-headers']));
      res.setHeader('access-control-max-age', String(PREFLIGHT_MAX_AGE_S));
      res.status(204).end();
      return;
    }
    res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
    next();
  };
}

/**
 * The base headers plus those the page asks for (an SDK's x-stainless-* and the like): no caller header but
 * these three ever reaches a provider, so allowing more costs nothing. A list with a malformed name is ignored.
 */
function allowedHeaders(requested: string | undefined): string {
  const names = (requested ?? '').split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '');
  if (names.length > 64 || !names.every((name) => TOKEN.test(name))) return BASE_ALLOWED_HEADERS.join(', ');
  return [...new Set([...BASE_ALLOWED_HEADERS, ...names])].join(', ');
}
