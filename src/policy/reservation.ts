import type { ModelTable } from '../generated/types/route-tables.js';
import type { ChatCompletionRequest } from '../generated/types/chat-completion-request.js';
import type { Reservation } from './limit-store.js';
import { estimateTokens } from '../observe/usage-estimate.js';

/** The output a request may write when it names no max_tokens and its model no max_output_tokens (docs/callers.md). */
export const DEFAULT_RESERVED_OUTPUT_TOKENS = 4096;

/**
 * What a request reserves at admission: its prompt, estimated as the characters of its chat body / 4 (the body
 * whole, so tools and images count: more than the prompt, never less, for text), plus the most it may write —
 * max_completion_tokens, else max_tokens, else the model's max_output_tokens, else DEFAULT_RESERVED_OUTPUT_TOKENS —
 * times n. Its USD is those tokens at the requested model's price (0 for an unpriced model, whose answers cost nothing).
 */
export function reservationFor(body: ChatCompletionRequest, bodyChars: number, route: ModelTable): Reservation {
  // The same rule as the estimate charged when a provider reports no usage, so a reservation settles to itself.
  const prompt = estimateTokens(bodyChars);
  // An embedding model writes no tokens: its answer costs its prompt only.
  if (route.kind === 'embedding') return { tokens: prompt, usd: route.price === null ? 0 : (prompt * route.price.inputPerMtok) / 1e6 };
  const named = count(body['max_completion_tokens']) ?? count(body['max_tokens']);
  const most = named ?? route.maxOutputTokens ?? DEFAULT_RESERVED_OUTPUT_TOKENS;
  // Above the model's own limit the dialect refuses the request; it can never write more.
  const output = Math.min(most, route.maxOutputTokens ?? most) * (count(body['n']) ?? 1);
  const price = route.price;
  const usd = price === null ? 0 : (prompt * price.inputPerMtok + output * price.outputPerMtok) / 1e6;
  return { tokens: prompt + output, usd };
}

/** A positive whole count as sent, or undefined (a bad value is refused later, naming its field). */
function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}
