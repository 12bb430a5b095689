import type { PriceTable } from '../generated/types/route-tables.js';
import type { Usage } from '../generated/types/usage.js';
import { readTokenCounts, type TokenCounts } from './token-counts.js';

/**
 * USD of one answer from its usage: prompt tokens neither read from nor written to the cache at the input price,
 * cached tokens at the cached price, cache writes at the cache-write price (each the input price when not given),
 * completion tokens (reasoning included) at the output price. Null without a price or without usage. `counts`:
 * the usage already read as counts (request-log.ts reads it once for the log line, the metrics and the cost).
 */
export function costUsd(usage: Usage | null, price: PriceTable | null, counts?: TokenCounts): number | null {
  if (price === null || usage === null) return null;
  counts ??= readTokenCounts(usage).counts;
  if (counts.prompt === null && counts.completion === null) return null;
  const prompt = counts.prompt ?? 0;
  const cached = Math.min(counts.cached ?? 0, prompt);
  const written = Math.min(cacheWrites(usage), prompt - cached);
  const micro =
    (prompt - cached - written) * price.inputPerMtok +
    cached * (price.cachedInputPerMtok ?? price.inputPerMtok) +
    written * (price.cacheWritePerMtok ?? price.inputPerMtok) +
    (counts.completion ?? 0) * price.outputPerMtok;
  // Tokens x USD per million tokens is micro-USD; rounded to 1e-8 USD so the log line carries no binary noise.
  return Math.round(micro * 100) / 1e8;
}

/** The anthropic dialect reports cache writes as prompt_tokens_details.cache_write_tokens (a count, or nothing). */
function cacheWrites(usage: Usage): number {
  const details = (usage as { prompt_tokens_details?: unknown }).prompt_tokens_details;
  const value = details !== null && typeof details === 'object' ? (details as Record<string, unknown>)['cache_write_tokens'] : undefined;
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0;
}
