import type { CallerTable } from '../generated/types/route-tables.js';
import type { Decision } from './limit-store.js';

/**
 * OpenAI's rate-limit headers, so the official SDKs and LangChain back off by themselves: per bucket the figure per
 * minute, what is left now, and how long until the bucket is full again (OpenAI's duration format: 20ms, 1.5s, 6m0s).
 */
export function rateLimitHeaders(limits: CallerTable['limits'], decision: Decision): Record<string, string> {
  const headers: Record<string, string> = {};
  const put = (names: (typeof NAMES)[keyof typeof NAMES], perMinute: number | null, level: number | null) => {
    if (perMinute === null || level === null) return;
    headers[names.limit] = String(perMinute);
    headers[names.remaining] = String(Math.max(0, Math.floor(level)));
    headers[names.reset] = duration(((perMinute - level) * 60_000) / perMinute);
  };
  put(NAMES.requests, limits.requestsPerMinute, decision.requestsLevel);
  put(NAMES.tokens, limits.tokensPerMinute, decision.tokensLevel);
  return headers;
}

/** Written out, not built per answer: a name built from parts is a new string on every response. */
const NAMES = {
  requests: { limit: 'x-ratelimit-limit-requests', remaining: 'x-ratelimit-remaining-requests', reset: 'x-ratelimit-reset-requests' },
  tokens: { limit: 'x-ratelimit-limit-tokens', remaining: 'x-ratelimit-remaining-tokens', reset: 'x-ratelimit-reset-tokens' },
} as const;

function duration(ms: number): string {
  if (!(ms > 0)) return '0s';
  if (ms < 1000) return `${Math.ceil(ms)}ms`;
  const seconds = Math.ceil(ms) / 1000;
  if (seconds < 60) return `${trim(seconds)}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${trim(seconds - minutes * 60)}s`;
  return `${Math.floor(minutes / 60)}h${minutes % 60}m${trim(seconds - minutes * 60)}s`;
}

function trim(seconds: number): string {
  return String(Math.round(seconds * 1000) / 1000);
}
