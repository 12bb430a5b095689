import type { Usage } from '../../generated/types/usage.js';
import { SSE_DONE, sseError } from '../../wire/sse-format.js';
import { gatewayError } from '../../wire/gateway-error.js';
import { ChunkWriter } from '../chunk-writer.js';
import type { StreamContext, StreamStep, StreamTranslator } from '../dialect.js';
import { isObject, parseJson } from '../json-values.js';
import { providerStreamErrorBody } from '../stream-error.js';
import { geminiStreamFailure, googleErrorOf, type GoogleError } from './errors.js';
import { finishReasonOf } from './finish-reason.js';
import { candidatesOf, extraContent, MAX_CANDIDATES, partsOf, promptBlocked, readParts } from './parts.js';
import { toolCall } from './response.js';
import { openAIUsage } from './usage.js';

const CONTINUE: StreamStep = { frames: '' };

/** What one candidate (one OpenAI choice) of the stream has said so far. */
interface Choice {
  readonly index: number;
  opened: boolean;
  /** Its function calls so far: the next one's tool_calls index. */
  calls: number;
  finishWord: string | undefined;
  /** A signature on an empty part, waiting for the call it belongs to. */
  readonly pending: { signature: string | undefined };
}

/**
 * streamGenerateContent?alt=sse as OpenAI chunks. Every `data:` record is a whole response whose candidates
 * carry their `index` (`n` asks for several): each candidate's text is a content delta of the choice at its
 * index, its thoughts a reasoning delta, each functionCall one tool_calls delta with the whole arguments and
 * an index counted across that choice. Finish reasons wait for the end of the body (Gemini sends no end
 * marker), so a call in any earlier record makes a final STOP `tool_calls`; the answer is whole when every
 * choice seen has one. Usage records are snapshots: the last stands, sent once. An `error` record ends the
 * stream in error, as the HTTP status it stands for when it comes first.
 */
export function createGeminiStreamTranslator({ routingModel, providerId, includeUsage }: StreamContext): StreamTranslator {
  const chunks = new ChunkWriter(routingModel);
  /** By index; at most MAX_CANDIDATES. */
  const choices = new Map<number, Choice>();
  let ended = false;
  let blocked = false;
  let usage: Usage | undefined;
  /** The span's description (docs/observability.md): the first record's responseId and modelVersion. */
  let first: { id: unknown; model: unknown } | undefined;

  const choiceAt = (index: number): Choice => {
    let choice = choices.get(index);
    if (!choice) choices.set(index, (choice = { index, opened: false, calls: 0, finishWord: undefined, pending: { signature: undefined } }));
    return choice;
  };
  const opening = (choice: Choice): string => {
    if (choice.opened) return '';
    choice.opened = true;
    return chunks.delta('{"role":"assistant","content":""}', null, choice.index);
  };
  const withUsage = (step: StreamStep): StreamStep => (usage ? { ...step, usage } : step);
  const fail = (message: string | null, error?: GoogleError): StreamStep => {
    ended = true;
    const failure = geminiStreamFailure(error);
    const fields = { message: message ?? failure.details.message, type: null, code: null, param: null, providerCode: failure.details.code };
    return withUsage({ frames: sseError(providerStreamErrorBody(fields, providerId)), end: 'error', failure });
  };

  return {
    describe: () => ({
      id: first?.id ?? null,
      model: first?.model ?? null,
      finishReasons: [...choices.values()].flatMap((choice) => (choice.finishWord === undefined ? [] : [choice.finishWord])),
    }),
    translate(message) {
      if (ended) return CONTINUE;
      if (message.kind === 'comment') return { frames: `: ${message.text}\n\n` };
      const parsed = parseJson(message.data);
      const error = googleErrorOf(parsed);
      if (error || !isObject(parsed)) return fail(null, error);
      usage = openAIUsage(parsed['usageMetadata']) ?? usage;
      chunks.useId(parsed['responseId']);
      first ??= { id: parsed['responseId'], model: parsed['modelVersion'] };
      const candidates = candidatesOf(parsed);
      // Not an error the provider reported but a record that is not an answer: the same 502 as a whole answer gets.
      if (candidates === undefined) throw gatewayError('invalid_upstream_response', `The provider "${providerId}" sent a candidate outside indexes 0 to ${MAX_CANDIDATES - 1}.`, { provider: providerId });
      if (candidates.length === 0 && promptBlocked(parsed)) blocked = true;
      let frames = '';
      for (const { index, candidate } of candidates) {
        const choice = choiceAt(index);
        const reason = candidate['finishReason'];
        if (typeof reason === 'string') choice.finishWord = reason;
        const parts = readParts(partsOf(candidate), choice.pending);
        frames += opening(choice);
        if (parts.reasoning !== '') frames += chunks.text('reasoning_content', parts.reasoning, index);
        if (parts.text !== '') frames += chunks.text('content', parts.text, index);
        for (const call of parts.calls) frames += chunks.delta(`{"tool_calls":[${toolCall(call, choice.calls++)}]}`, null, index);
        if (parts.messageSignature) frames += chunks.delta(`{"extra_content":${extraContent(parts.messageSignature)}}`, null, index);
      }
      return withUsage({ frames });
    },
    end() {
      if (ended) return undefined;
      const finished = [...choices.values()].every((choice) => choice.finishWord !== undefined);
      if (!blocked && (choices.size === 0 || !finished)) return undefined;
      ended = true;
      if (choices.size === 0) choiceAt(0);
      let frames = '';
      for (const choice of [...choices.values()].sort((a, b) => a.index - b.index)) {
        frames += opening(choice);
        if (choice.pending.signature) frames += chunks.delta(`{"extra_content":${extraContent(choice.pending.signature)}}`, null, choice.index);
        const reason = blocked ? 'content_filter' : finishReasonOf(choice.finishWord!, choice.calls > 0);
        frames += chunks.delta('{}', reason, choice.index);
      }
      if (includeUsage && usage) frames += chunks.usage(usage);
      return withUsage({ frames: frames + SSE_DONE, end: 'done' });
    },
  };
}
