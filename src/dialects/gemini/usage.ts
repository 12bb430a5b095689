import type { Usage } from '../../generated/types/usage.js';
import { isObject } from '../json-values.js';

/**
 * Gemini's usageMetadata in OpenAI's terms. The prompt counts tool-use prompt tokens too; the completion
 * counts thoughts as OpenAI counts reasoning, inside completion_tokens. A figure that is not a count is
 * left out. Undefined when there is no usageMetadata.
 */
export function openAIUsage(metadata: unknown): Usage | undefined {
  if (!isObject(metadata)) return undefined;
  const count = (key: string): number | undefined => {
    const value = metadata[key];
    return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  };
  const prompt = count('promptTokenCount');
  const candidates = count('candidatesTokenCount');
  const thoughts = count('thoughtsTokenCount');
  const usage: Usage = {};
  if (prompt !== undefined) usage.prompt_tokens = prompt + (count('toolUsePromptTokenCount') ?? 0);
  // A blocked prompt or a thought-only answer reports no candidatesTokenCount: nothing was generated there.
  if (candidates !== undefined || thoughts !== undefined || prompt !== undefined) usage.completion_tokens = (candidates ?? 0) + (thoughts ?? 0);
  const total = count('totalTokenCount');
  if (total !== undefined) usage.total_tokens = total;
  usage.prompt_tokens_details = { cached_tokens: count('cachedContentTokenCount') ?? 0 };
  usage.completion_tokens_details = { reasoning_tokens: thoughts ?? 0 };
  return usage;
}
