import type { Usage } from '../../generated/types/usage.js';
import { SSE_DONE, sseError } from '../../wire/sse-format.js';
import { ChunkWriter } from '../chunk-writer.js';
import type { StreamContext, StreamStep, StreamTranslator } from '../dialect.js';
import { isObject, parseJson } from '../json-values.js';
import { providerStreamErrorBody } from '../stream-error.js';
import { googleErrorOf } from './errors.js';
import { finishReasonOf } from './finish-reason.js';
import { extraContent, firstCandidate, partsOf, promptBlocked, readParts } from './parts.js';
import { toolCall } from './response.js';
import { openAIUsage } from './usage.js';

const CONTINUE: StreamStep = { frames: '' };

/**
 * streamGenerateContent?alt=sse as OpenAI chunks. Every `data:` record is a whole response: its text is
 * a content delta, its thoughts a reasoning delta, each functionCall one tool_calls delta with the whole
 * arguments and an index counted across the answer. The finish reason waits for the end of the body
 * (Gemini sends no end marker), so a call in any earlier record makes a final STOP `tool_calls`. Usage
 * records are snapshots: the last stands. An `error` record after the 200 ends the stream in error.
 */
export function createGeminiStreamTranslator({ routingModel, providerId, includeUsage }: StreamContext): StreamTranslator {
  const chunks = new ChunkWriter(routingModel);
  const pending = { signature: undefined as string | undefined };
  let opened = false;
  let ended = false;
  let calls = 0;
  let finishWord: string | undefined;
  let blocked = false;
  let usage: Usage | undefined;

  const opening = (): string => {
    if (opened) return '';
    opened = true;
    return chunks.delta('{"role":"assistant","content":""}');
  };
  const withUsage = (step: StreamStep): StreamStep => (usage ? { ...step, usage } : step);

  return {
    translate(message) {
      if (ended) return CONTINUE;
      if (message.kind === 'comment') return { frames: `: ${message.text}\n\n` };
      const parsed = parseJson(message.data);
      const error = googleErrorOf(parsed);
      if (error || !isObject(parsed)) {
        ended = true;
        const body = providerStreamErrorBody({ message: error?.message ?? null, type: null, code: null, param: null, providerCode: error?.status ?? null }, providerId);
        return withUsage({ frames: sseError(body), end: 'error' });
      }
      usage = openAIUsage(parsed['usageMetadata']) ?? usage;
      chunks.useId(parsed['responseId']);
      const candidate = firstCandidate(parsed);
      if (!candidate && promptBlocked(parsed)) blocked = true;
      const reason = candidate?.['finishReason'];
      if (typeof reason === 'string') finishWord = reason;
      const parts = readParts(partsOf(candidate), pending);
      let frames = opening();
      if (parts.reasoning !== '') frames += chunks.text('reasoning_content', parts.reasoning);
      if (parts.text !== '') frames += chunks.text('content', parts.text);
      for (const call of parts.calls) frames += chunks.delta(`{"tool_calls":[${toolCall(call, calls++)}]}`);
      if (parts.messageSignature) frames += chunks.delta(`{"extra_content":${extraContent(parts.messageSignature)}}`);
      return withUsage({ frames });
    },
    end() {
      if (ended || (finishWord === undefined && !blocked)) return undefined;
      ended = true;
      let frames = opening();
      if (pending.signature) frames += chunks.delta(`{"extra_content":${extraContent(pending.signature)}}`);
      frames += chunks.delta('{}', blocked ? 'content_filter' : finishReasonOf(finishWord!, calls > 0));
      if (includeUsage && usage) frames += chunks.usage(usage);
      return withUsage({ frames: frames + SSE_DONE, end: 'done' });
    },
  };
}
