import type { AnswerWriter } from '../routing/answer-writer.js';
import { gatewayError } from '../wire/gateway-error.js';
import { sseError } from '../wire/sse-format.js';
import { chatCompletionsHandler, type ChatCompletionsOptions, type InboundFormat } from './chat-completions.js';
import { writeJson } from './chat-answer.js';
import { checkEmbeddingsRequest } from './embeddings-request.js';

/**
 * POST /v1/embeddings: the same engine as chat (callers, limits, budgets, failover, logs), for `kind: embedding`
 * models. The body goes to the route's dialect as the caller sent it (NativeFormat `openai-embeddings`), which sends
 * it on (openai) or translates it (gemini); it has no chat form.
 */
export function embeddingsHandler(options: Omit<ChatCompletionsOptions, 'inbound'>) {
  return chatCompletionsHandler({ ...options, inbound: EMBEDDINGS });
}

const EMBEDDINGS: InboundFormat = {
  kind: 'embedding',
  read({ text, value }) {
    const { model } = checkEmbeddingsRequest(value);
    // The engine checks a chat request's shape: this stand-in passes it. `text` stays the caller's, so what the
    // request reserves of its caller's limits is estimated from the body it sent.
    const placeholder = { model, messages: [{ role: 'user', content: '' }] };
    const native = { call: { format: 'openai-embeddings', text, headers: {} }, writer: EMBEDDINGS_WRITER } as const;
    return { text, value: placeholder, answer: { native, chat: { refusal: noEmbeddingsApi() } } };
  },
};

/** The dialect's answer is OpenAI's embeddings list already; never streamed. */
const EMBEDDINGS_WRITER: AnswerWriter = { whole: writeJson, stream: () => ({ frames: (text) => text, error: sseError }) };

function noEmbeddingsApi() {
  return gatewayError('invalid_request', "This model's provider has no embeddings API on this gateway (docs/embeddings.md).", { param: 'model' });
}
