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

/**
 * Anthropic's usage in OpenAI's terms: prompt_tokens counts every input token, cached or not
 * (input_tokens excludes both cache reads and cache writes). A figure that is not a number makes its
 * sums NaN (sent as null; counted by the engine as not a number); negative, fractional or huge
 * figures pass through as the provider sent them, for the engine's token-count checks to refuse.
 */
export function openAIUsage(counts: AnthropicCounts): Usage {
  const input = figure(counts.input_tokens);
  const output = figure(counts.output_tokens);
  const cacheRead = figure(counts.cache_read_input_tokens) ?? 0;
  const cacheWrite = figure(counts.cache_creation_input_tokens) ?? 0;
  const usage: Usage = {};
  const prompt = input === undefined ? undefined : input + cacheRead + cacheWrite;
  if (prompt !== undefined) usage.prompt_tokens = prompt;
  if (output !== undefined) usage.completion_tokens = output;
  if (prompt !== undefined && output !== undefined) usage.total_tokens = prompt + output;
  usage.prompt_tokens_details = { cached_tokens: cacheRead, cache_write_tokens: cacheWrite };
  return usage;
}

function figure(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'number' ? value : Number.NaN;
}
