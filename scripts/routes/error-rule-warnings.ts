import type { LoadedRoutes } from './load-routes.js';
import { formatPath, type Problem } from './problem.js';

/** Statuses that tell a caller to wait and send again: a rule answering one should let it retry. */
const TRY_LATER = new Set([429, 503]);
/** 4xx statuses OpenAI's SDKs retry anyway; any other 4xx is the request's own fault, and retrying it repeats it. */
const RETRYABLE_4XX = new Set([408, 409, 429]);

/**
 * Error rules whose status and retry disagree: they compile (ops may mean it), but `npm run check` says so.
 * A 429 or 503 with `retry: false` tells callers to try later and never; a 4xx with `retry: true` has SDKs
 * resend a request that will fail the same way. Reported at the rule's `retry`.
 */
export function errorRuleWarnings(loaded: LoadedRoutes): Problem[] {
  const warnings: Problem[] = [];
  const check = (path: (string | number)[], table: unknown) => {
    for (const [key, rule] of Object.entries(asMap(table))) {
      const { status, retry } = asMap(rule);
      if (typeof status !== 'number' || typeof retry !== 'boolean') continue;
      const where = [...path, key];
      const message =
        TRY_LATER.has(status) && !retry ? `status ${status} says "try later" but retry: false says never; callers get x-should-retry: false (and no retry-after). Set retry: true, or answer another status`
        : status >= 400 && status < 500 && !RETRYABLE_4XX.has(status) && retry ? `status ${status} is the request's own fault but retry: true has SDKs send it again unchanged. Set retry: false, or answer a 5xx`
        : null;
      if (message) warnings.push({ ...loaded.locate([...where, 'retry'], 'key'), message: `warning: ${formatPath(where)}: ${message}` });
    }
  };
  check(['errors'], asMap(loaded.data)['errors']);
  for (const [id, provider] of Object.entries(asMap(asMap(loaded.data)['providers']))) check(['providers', id, 'errors'], asMap(provider)['errors']);
  return warnings;
}

function asMap(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
