import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { gatewayError } from '../wire/gateway-error.js';

/** Paths a load balancer or scraper reaches without a key. */
const OPEN_PATHS = new Set(['/health', '/metrics']);
/** Anthropic's clients send their key as x-api-key: accepted there as well as Authorization: Bearer. */
const API_KEY_HEADER_PATHS = /^\/v1\/messages(\/|$)/;

/**
 * Requires `Authorization: Bearer <key>` with one of `keys` on every path but the open ones, before
 * routing (so an unknown path without a key is a 401, not a 404). Keys are compared as sha256 digests
 * with timingSafeEqual against every configured key, so the time taken says nothing about any key.
 */
export function callerAuth(keys: readonly string[]): RequestHandler {
  const digests = keys.map(digest);
  return (req, _res, next) => {
    if (OPEN_PATHS.has(req.path)) return next();
    const header = req.headers.authorization;
    const apiKey = header === undefined && API_KEY_HEADER_PATHS.test(req.path) ? req.headers['x-api-key'] : undefined;
    const match = typeof apiKey === 'string' ? /^ *(\S+) *$/.exec(apiKey) : header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
    if (!match) {
      return next(gatewayError('unauthorized', 'Missing API key: send Authorization: Bearer <key> with a key issued for this gateway.'));
    }
    const presented = digest(match[1]!);
    let accepted = false;
    for (const known of digests) accepted = timingSafeEqual(presented, known) || accepted;
    next(accepted ? undefined : gatewayError('unauthorized', 'Invalid API key.'));
  };
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}
