import type { Dialect } from '../dialect.js';
import { sseStreamReader } from '../sse-stream-reader.js';
import { readAnthropicError } from './errors.js';
import { anthropicNative } from './native.js';
import { buildAnthropicRequest } from './request/index.js';
import { readAnthropicResponse } from './response.js';
import { createAnthropicStreamTranslator } from './stream.js';

/**
 * Anthropic's native Messages API ({base_url}/messages). Its key and version headers are data
 * (./defaults.ts); its stream is SSE with `event:` lines, which the shared reader frames.
 * Usage always comes with Anthropic's answers, so `requestStreamUsage` changes nothing here.
 */
export const anthropicDialect: Dialect = {
  buildRequest({ text, body, upstreamModel, maxOutputTokens, reasoning, allowedFields }) {
    // The routes compiler refuses an anthropic-dialect model without max_output_tokens: null here is a bug.
    if (maxOutputTokens === null) throw new Error(`the anthropic model "${upstreamModel}" has no max_output_tokens`);
    // `levels` is a gemini-dialect mode, refused on other models by the routes compiler.
    if (reasoning === 'levels') throw new Error(`the anthropic model "${upstreamModel}" has reasoning levels`);
    return { path: 'messages', body: buildAnthropicRequest(text, body, { upstreamModel, maxOutputTokens, reasoning, allowedFields }) };
  },
  readResponse: readAnthropicResponse,
  readError: readAnthropicError,
  createStreamReader(context) {
    return sseStreamReader(createAnthropicStreamTranslator(context), context.maxEventChars);
  },
  native: anthropicNative,
};
