import type { Request, RequestHandler } from 'express';
import type { AnswerWriter, StreamFrames } from '../../routing/answer-writer.js';
import { gatewayError } from '../../wire/gateway-error.js';
import { useErrorWriter } from '../../caller/send-error.js';
import { chatCompletionsHandler, type ChatCompletionsOptions, type InboundFormat } from '../chat-completions.js';
import { messageOfCompletion } from './answer.js';
import { anthropicErrorEvent, sendAnthropicError } from './errors.js';
import { messagesAsChat, readNativeMessages } from './request.js';
import { messagesStream } from './stream.js';
import { parsed, writeJson } from '../chat-answer.js';

/** Caller headers a native Anthropic call carries on (the rest never reach the provider). */
const FORWARDED_HEADERS = ['anthropic-beta', 'anthropic-version'];

/** Every error on the /v1/messages routes, the caller's key check included, leaves in Anthropic's shape. */
export const anthropicErrorShape: RequestHandler = (_req, res, next) => {
  useErrorWriter(res, sendAnthropicError);
  next();
};

/** POST /v1/messages: natively to anthropic-dialect routes, through the internal chat form to the others. */
export function messagesHandler(options: Omit<ChatCompletionsOptions, 'inbound'>) {
  return chatCompletionsHandler({ ...options, inbound: messagesFormat(false) });
}

/** POST /v1/messages/count_tokens: natively to anthropic-dialect routes; 404 elsewhere (an estimate would understate). */
export function countTokensHandler(options: Omit<ChatCompletionsOptions, 'inbound'>) {
  return chatCompletionsHandler({ ...options, inbound: messagesFormat(true) });
}

function messagesFormat(countTokens: boolean): InboundFormat {
  return {
    read({ text, value }, req) {
      const { model, stream } = readNativeMessages(value, countTokens);
      const call = { format: countTokens ? 'anthropic-count-tokens' : 'anthropic-messages', text, headers: forwardedHeaders(req) } as const;
      const native = { call, writer: nativeWriter };
      if (countTokens) {
        const placeholder = { model, messages: [{ role: 'user', content: '' }] };
        return { text: JSON.stringify(placeholder), value: placeholder, answer: { native, chat: { refusal: countNotServed() } } };
      }
      // The chat form is built now, so a field no route could honour is refused before anything is sent.
      // Built now; a field with no chat form is refused only when a route without native Messages comes to serve it.
      let translated: ReturnType<typeof messagesAsChat> | undefined;
      let refusal: Error | undefined;
      try {
        translated = messagesAsChat(value as Record<string, unknown>);
      } catch (error) {
        refusal = error as Error;
      }
      if (!translated) {
        const body = { model, messages: [{ role: 'user', content: '' }], ...(stream ? { stream: true } : {}) };
        return { text: JSON.stringify(body), value: body, answer: { native, chat: { refusal: refusal! } } };
      }
      const { chat, paths } = translated;
      return { text: JSON.stringify(chat), value: chat, answer: { native, chat: translatedWriter(model), paths } };
    },
  };
}

function forwardedHeaders(req: Request): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = req.headers[name];
    if (typeof value === 'string' && /^[\x20-\x7e]{1,512}$/.test(value)) headers[name] = value;
  }
  return headers;
}

/** Anthropic's answers pass as they came (the dialect set `model`); its errors mid-stream are its own events. */
const nativeWriter: AnswerWriter = {
  whole: writeJson,
  stream: (): StreamFrames => ({ frames: (text) => text, error: anthropicErrorEvent }),
};

function translatedWriter(routingModel: string): AnswerWriter {
  return {
    whole(res, status, text) {
      const message = messageOfCompletion(parsed(text), routingModel);
      if (!message) throw gatewayError('invalid_upstream_response', 'The provider answered with a body that is not a chat completion.');
      writeJson(res, status, JSON.stringify(message));
    },
    stream: () => messagesStream(routingModel),
  };
}

function countNotServed() {
  return gatewayError(
    'not_found',
    'POST /v1/messages/count_tokens is served for routes whose provider speaks Anthropic natively only; this gateway does not estimate counts for others (docs/messages.md).',
  );
}
