import { buildAnthropicRequest, type AnthropicModel } from '../../src/dialects/anthropic/request/index.js';
import { GatewayError } from '../../src/wire/gateway-error.js';
import type { ChatCompletionRequest } from '../../src/generated/types/chat-completion-request.js';

export const BUDGET_MODEL: AnthropicModel = { upstreamModel: 'claude-sonnet-4-5', maxOutputTokens: 64000, reasoning: 'budget' };
export const ADAPTIVE_MODEL: AnthropicModel = { upstreamModel: 'claude-opus-4-7', maxOutputTokens: 128000, reasoning: 'adaptive' };
export const PLAIN_MODEL: AnthropicModel = { upstreamModel: 'claude-3-5-haiku', maxOutputTokens: 8192, reasoning: 'none' };

export const USER = { role: 'user', content: 'hi' };

/** The Anthropic body for a request given as an object (sent as JSON.stringify would) or as exact text. */
export function translate(request: object | string, model: AnthropicModel = BUDGET_MODEL): { text: string; json: Record<string, any> } {
  const text = typeof request === 'string' ? request : JSON.stringify(request);
  const out = buildAnthropicRequest(text, JSON.parse(text) as ChatCompletionRequest, model);
  return { text: out, json: JSON.parse(out) as Record<string, any> };
}

/** The gateway error a request is refused with; throws when it is not refused. */
export function refusal(request: object | string, model: AnthropicModel = BUDGET_MODEL): GatewayError {
  try {
    translate(request, model);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error(`not refused: ${typeof request === 'string' ? request.slice(0, 200) : JSON.stringify(request).slice(0, 200)}`);
}

/** A request with the usual model and one user message, plus `fields`. */
export function withFields(fields: Record<string, unknown>): Record<string, unknown> {
  return { model: 'anthropic/claude', messages: [USER], ...fields };
}
