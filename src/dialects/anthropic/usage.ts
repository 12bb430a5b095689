import type { Usage } from '../../generated/types/usage.js';
import { isObject } from './json-values.js';

/** The four counts of Anthropic's usage object this gateway maps; each as the provider sent it. */
export interface AnthropicCounts {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cache_read_input_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
}

const FIELDS = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const;

/**
 * Anthropic's counts are cumulative: a later event's figure replaces the earlier one, field by field
 * (a message_delta may repeat only output_tokens). Null and absent fields leave what was known.
 */
export function mergeCounts(known: AnthropicCounts | undefined, usage: unknown): AnthropicCounts | undefined {
  if (!isObject(usage)) return known;
  const merged: AnthropicCounts = { ...known };
  let changed = false;
  for (const field of FIELDS) {
    const value = usage[field];
    if (value === undefined || value === null) continue;
    merged[field] = value;
    changed = true;
  }
  return changed || known ? merged : undefined;
}

/** Anthropic's usage in OpenAI's terms, for the caller and for the gateway's accounting. */
export interface MappedUsage {
  /** Only counts (non-negative safe integers); a figure that depends on anything else is null. */
  readonly caller: Usage;
  /** Where the provider's figure was not a count, that figure itself, for the engine's token-count checks to report. */
  readonly accounting: Usage;
}

/**
 * prompt_tokens counts every input token, cached or not (Anthropic's input_tokens excludes both cache
 * reads and cache writes); the details say how many were read from and written to the cache.
 */
export function openAIUsage(counts: AnthropicCounts): MappedUsage {
  const input = counts.input_tokens;
  const output = counts.output_tokens;
  const cacheRead = counts.cache_read_input_tokens ?? 0;
  const cacheWrite = counts.cache_creation_input_tokens ?? 0;
  const fields: [keyof Usage, Sum | undefined][] = [
    ['prompt_tokens', present(input) ? sum(input, cacheRead, cacheWrite) : undefined],
    ['completion_tokens', present(output) ? sum(output) : undefined],
    ['total_tokens', present(input) && present(output) ? sum(input, output, cacheRead, cacheWrite) : undefined],
  ];
  const caller: Record<string, unknown> = {};
  const accounting: Record<string, unknown> = {};
  for (const [field, figure] of fields) {
    if (!figure) continue;
    caller[field] = figure.caller;
    accounting[field] = figure.accounting;
  }
  const read = sum(cacheRead);
  const write = sum(cacheWrite);
  caller['prompt_tokens_details'] = { cached_tokens: read.caller, cache_write_tokens: write.caller };
  accounting['prompt_tokens_details'] = { cached_tokens: read.accounting, cache_write_tokens: write.accounting };
  return { caller: caller as Usage, accounting: accounting as Usage };
}

interface Sum {
  readonly caller: number | null;
  readonly accounting: unknown;
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** The sum of counts; when a term is not one, that term stands for the sum in the accounting (so its anomaly is the one reported). */
function sum(...terms: unknown[]): Sum {
  const bad = terms.find((term) => !isCount(term));
  if (bad !== undefined) return { caller: null, accounting: bad };
  const total = (terms as number[]).reduce((a, b) => a + b, 0);
  return { caller: Number.isSafeInteger(total) ? total : null, accounting: total };
}
