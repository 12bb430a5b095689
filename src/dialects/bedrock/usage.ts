import type { Usage } from '../../generated/types/usage.js';
import { isObject } from '../json-values.js';

/**
 * Converse's TokenUsage in OpenAI's terms, as the anthropic dialect maps Anthropic's: inputTokens leaves out
 * cache reads and writes, so prompt_tokens adds them back, and the details say how many there were. A figure
 * that is not a count is left out; undefined when there is no usage object.
 */
export function openAIUsage(usage: unknown): Usage | undefined {
  if (!isObject(usage)) return undefined;
  const count = (key: string): number | undefined => {
    const value = usage[key];
    return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  };
  const input = count('inputTokens');
  const output = count('outputTokens');
  const read = count('cacheReadInputTokens') ?? 0;
  const write = count('cacheWriteInputTokens') ?? 0;
  const out: Usage = {};
  if (input !== undefined) out.prompt_tokens = input + read + write;
  if (output !== undefined) out.completion_tokens = output;
  const total = count('totalTokens') ?? (input !== undefined && output !== undefined ? input + read + write + output : undefined);
  if (total !== undefined) out.total_tokens = total;
  out.prompt_tokens_details = { cached_tokens: read, cache_write_tokens: write };
  return out;
}
