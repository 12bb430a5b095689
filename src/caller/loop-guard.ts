import type { RequestHandler, Response } from 'express';
import { gatewayError } from '../wire/gateway-error.js';
import { formatVia, GATEWAY_ID_PATTERN, ownViaEntry, parseVia } from '../wire/via.js';

/**
 * More Via entries than this is a loop too (through proxies that each add one), or a header nobody sends in good
 * faith: refused rather than trimmed, since a trimmed Via could lose the entry that would catch the loop.
 */
export const MAX_VIA_ENTRIES = 16;

/**
 * This gateway's name in Via: GATEWAY_ID, else one shared by every instance built from the same routes.yaml, so
 * a loop through another replica of the same deployment is caught at the first hop back as well.
 */
export function gatewayIdOf(routesSha256: string, env: Readonly<Record<string, string | undefined>>): string {
  const id = env['GATEWAY_ID'];
  if (!id) return `chat-routing-gateway-${routesSha256.slice(0, 12)}`;
  if (!GATEWAY_ID_PATTERN.test(id)) throw new Error('GATEWAY_ID must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit');
  return id;
}

/**
 * Refuses a request whose Via names this gateway with 508 loop_detected, before its caller is identified: a
 * request that looped carries a provider's credentials, not a caller key, so a 401 would hide the loop. Keeps
 * what goes upstream in Via for the attempts (upstreamViaOf).
 */
export function loopGuard(gatewayId: string): RequestHandler {
  const own = ownViaEntry(gatewayId);
  const lowerId = gatewayId.toLowerCase();
  return (req, res, next) => {
    const header = req.headers.via;
    if (header === undefined) return next();
    const received = parseVia(header);
    if (received.some((entry) => entry.receivedBy.toLowerCase() === lowerId)) {
      return next(
        gatewayError(
          'loop_detected',
          `This request already passed through this gateway (Via names "${gatewayId}"): a provider's base URL leads back here. Point it at the provider; two gateways chained on purpose need different GATEWAY_ID values.`,
        ),
      );
    }
    if (received.length >= MAX_VIA_ENTRIES) {
      return next(gatewayError('loop_detected', `This request already passed through ${received.length} proxies (Via), more than ${MAX_VIA_ENTRIES - 1}: it is taken for a loop.`));
    }
    if (received.length > 0) res.locals['via'] = formatVia(received, own);
    next();
  };
}

/** The Via for this request's upstream calls: what it arrived with and this gateway's entry; `own` when it came without one. */
export function upstreamViaOf(res: Response, own: string): string {
  return (res.locals['via'] as string | undefined) ?? own;
}
