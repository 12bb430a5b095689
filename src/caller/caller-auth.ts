import { hash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { CallerTable } from '../generated/types/route-tables.js';
import { recordOf } from '../observe/request-log.js';
import { gatewayError } from '../wire/gateway-error.js';

/** Paths a load balancer or scraper reaches without a key. */
const OPEN_PATHS = new Set(['/health', '/metrics']);
/** Anthropic's clients send their key as x-api-key: accepted there as well as Authorization: Bearer. */
const API_KEY_HEADER_PATHS = /^\/v1\/messages(\/|$)/;

const MISSING_KEY = 'Missing API key: send Authorization: Bearer <key> with a key issued for this gateway.';

/**
 * Requires `Authorization: Bearer <key>` with one of `keys` on every path but the open ones, before
 * routing (so an unknown path without a key is a 401, not a 404). Keys are compared as sha256 digests
 * with timingSafeEqual against every configured key, so the time taken says nothing about any key.
 */
export function callerAuth(keys: readonly string[]): RequestHandler {
  const digests = keys.map(digest);
  return (req, res, next) => {
    if (OPEN_PATHS.has(req.path)) return next();
    const key = presentedKey(req);
    if (key === undefined) return next(gatewayError('unauthorized', MISSING_KEY));
    const presented = digest(key);
    let accepted = false;
    for (const known of digests) accepted = timingSafeEqual(presented, known) || accepted;
    if (accepted) recordOf(res).caller = 'key';
    next(accepted ? undefined : gatewayError('unauthorized', 'Invalid API key.'));
  };
}

/**
 * Named callers (routes.yaml callers:): the key's sha256 is looked up among the callers' digests. A Map lookup of a digest
 * is as safe as comparing every digest in constant time: what its timing could reveal is about the digest of the key
 * presented, which its sender already knows, never about a key it does not have.
 */
export function namedCallerAuth(identify: (key: string) => CallerTable | undefined): RequestHandler {
  return (req, res, next) => {
    if (OPEN_PATHS.has(req.path)) return next();
    const key = presentedKey(req);
    if (key === undefined) return next(gatewayError('unauthorized', MISSING_KEY));
    const caller = identify(key);
    if (!caller) return next(gatewayError('unauthorized', 'Invalid API key.'));
    recordOf(res).caller = caller.name;
    res.locals['caller'] = caller;
    next();
  };
}

/** The named caller namedCallerAuth found for this request, if any. */
export function callerOf(res: Response): CallerTable | undefined {
  return res.locals['caller'] as CallerTable | undefined;
}

/** `Authorization: Bearer <key>`, or on the Anthropic-format paths an `x-api-key` when no Authorization is sent. */
function presentedKey(req: Request): string | undefined {
  const header = req.headers.authorization;
  const apiKey = header === undefined && API_KEY_HEADER_PATHS.test(req.path) ? req.headers['x-api-key'] : undefined;
  const match = typeof apiKey === 'string' ? /^ *(\S+) *$/.exec(apiKey) : header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
  return match ? match[1]! : undefined;
}

function digest(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}
