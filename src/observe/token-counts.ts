import type { Usage } from '../generated/types/usage.js';

/** The token counts the gateway logs and counts in metrics; null when the provider gave none (or an unusable one). */
export interface TokenCounts {
  readonly prompt: number | null;
  readonly completion: number | null;
  readonly cached: number | null;
  readonly reasoning: number | null;
}

/** Why a provider's figure was not taken as a count. */
export type TokenAnomaly = 'negative' | 'fractional' | 'too_large' | 'not_a_number';

export interface ReadTokenCounts {
  readonly counts: TokenCounts;
  /** Usage field → what was wrong with it; empty when every figure present was a count. */
  readonly anomalies: Readonly<Record<string, TokenAnomaly>>;
}

const NONE: ReadTokenCounts = { counts: { prompt: null, completion: null, cached: null, reasoning: null }, anomalies: {} };

/**
 * A provider's usage object read as counts. Only non-negative safe integers count: `1e308` would pin a
 * Prometheus counter at +Inf for the life of the process, and a fraction or a string is not a token count.
 */
export function readTokenCounts(usage: Usage | null): ReadTokenCounts {
  if (usage === null || typeof usage !== 'object') return NONE;
  const anomalies: Record<string, TokenAnomaly> = {};
  const read = (field: string, value: unknown): number | null => {
    if (value === undefined || value === null) return null;
    const anomaly = anomalyOf(value);
    if (anomaly === undefined) return value as number;
    anomalies[field] = anomaly;
    return null;
  };
  const counts: TokenCounts = {
    prompt: read('prompt_tokens', usage.prompt_tokens),
    completion: read('completion_tokens', usage.completion_tokens),
    cached: read('prompt_tokens_details.cached_tokens', fieldOf(usage.prompt_tokens_details, 'cached_tokens')),
    reasoning: read('completion_tokens_details.reasoning_tokens', fieldOf(usage.completion_tokens_details, 'reasoning_tokens')),
  };
  return { counts, anomalies };
}

function anomalyOf(value: unknown): TokenAnomaly | undefined {
  if (typeof value !== 'number' || Number.isNaN(value)) return 'not_a_number';
  if (value < 0) return 'negative';
  if (!Number.isInteger(value)) return Number.isFinite(value) ? 'fractional' : 'too_large';
  return Number.isSafeInteger(value) ? undefined : 'too_large';
}

/** The provider's JSON is not checked against the schema: a details "object" may be anything. */
function fieldOf(details: unknown, key: string): unknown {
  return details !== null && typeof details === 'object' && !Array.isArray(details) ? (details as Record<string, unknown>)[key] : undefined;
}
