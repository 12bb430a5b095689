import type { Usage } from '../generated/types/usage.js';
import type { StreamReader } from './dialect.js';

/** What every dialect's embeddings answer shares: no stream (the endpoint never asks for one). */
export function embeddingsNoStream(): StreamReader {
  throw new Error('embeddings are never streamed'); // the endpoint sets no stream, so the engine never asks
}

/** The usage an embeddings answer carries: prompt tokens only; null when the counts are not non-negative integers. */
export function embeddingsUsage(prompt: unknown, total: unknown): Usage | null {
  const count = (value: unknown) => (Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined);
  const promptTokens = count(prompt);
  if (promptTokens === undefined) return null;
  return { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: count(total) ?? promptTokens };
}

