import type { ModelTable } from '../generated/types/route-tables.js';

/** Computed once per roster entry: a deprecated model's answers all carry the same three headers. */
const cache = new WeakMap<ModelTable, Readonly<Record<string, string>> | null>();

/**
 * The headers of every answer for a deprecated routing string: `Deprecation: @<since, Unix seconds>` (RFC 9745),
 * `Sunset: <HTTP-date>` (RFC 8594) and `x-gateway-replacement` when routes.yaml names one. Null when not deprecated.
 * The compiler checked the dates (YYYY-MM-DD, midnight UTC).
 */
export function deprecationHeaders(route: ModelTable): Readonly<Record<string, string>> | null {
  const cached = cache.get(route);
  if (cached !== undefined) return cached;
  const deprecated = route.deprecated;
  let headers: Record<string, string> | null = null;
  if (deprecated) {
    headers = {
      deprecation: `@${Math.floor(Date.parse(`${deprecated.since}T00:00:00Z`) / 1000)}`,
      sunset: new Date(Date.parse(`${deprecated.sunset}T00:00:00Z`)).toUTCString(),
    };
    if (deprecated.replacement !== null) headers['x-gateway-replacement'] = deprecated.replacement;
  }
  cache.set(route, headers);
  return headers;
}
