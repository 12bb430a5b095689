import { SSE_DONE, sseError } from '../../wire/sse-format.js';
import type { StreamContext, StreamFailure, StreamStep, StreamTranslator } from '../dialect.js';
import { StreamBudget } from '../stream-budget.js';
import { providerStreamErrorBody, type StreamErrorFields } from '../stream-error.js';
import { ChunkWriter } from '../chunk-writer.js';
import { anthropicErrorOf } from './errors.js';
import { finishReasonOf } from './finish-reason.js';
import { isObject, rawValueOf } from './json-values.js';
import { ContentBlocks } from './stream-blocks.js';
import { mergeCounts, openAIUsage, type AnthropicCounts } from './usage.js';
import { typedEvent } from '../typed-event.js';

const CONTINUE: StreamStep = { frames: '' };

/**
 * Anthropic's Messages event stream as OpenAI chat.completion chunks, for one answer. The data's
 * `type` names the event (the SSE `event:` line only when the data has none); pings and event types
 * this gateway does not know send nothing. Usage is cumulative in Anthropic's events, so the latest
 * figures stand; they go to the caller in a final `choices: []` chunk only when it asked
 * (`stream_options.include_usage`), and to the gateway's accounting always. Nothing after
 * message_stop or an error event is read.
 */
export function createAnthropicStreamTranslator({ routingModel, providerId, includeUsage, maxHeldChars, holdings }: StreamContext): StreamTranslator {
  const chunks = new ChunkWriter(routingModel);
  const blocks = new ContentBlocks(chunks, new StreamBudget(maxHeldChars ?? Infinity, holdings));
  let opened = false;
  let finished = false;
  let ended = false;
  let counts: AnthropicCounts | undefined;
  /** The span's description (docs/observability.md): message_start's id and model, message_delta's stop reason. */
  let described: { id: unknown; model: unknown; finishReasons: unknown[] } = { id: null, model: null, finishReasons: [] };
  /** The step that follows the closing of the blocks still open, owed once they are all closed. */
  let afterBlocks: StreamStep | undefined;

  /**
   * The first chunk of every answer (the role, and an empty content) goes out with the first frames that carry
   * something: message_start alone sends nothing, so an error right after it comes before the stream commits.
   */
  const withOpening = (frames: string): string => {
    if (opened || frames === '') return frames;
    opened = true;
    return chunks.delta('{"role":"assistant","content":""}') + frames;
  };
  const finish = (finishReason: string): string => {
    finished = true;
    return chunks.delta('{}', finishReason);
  };
  const withUsage = (step: StreamStep): StreamStep => (counts ? { ...step, usage: openAIUsage(counts).accounting } : step);
  /** `last` once every open block is closed: the first closing now, the others and `last` owed, block by block. */
  const closeBlocksThen = (last: StreamStep): StreamStep => {
    if (!blocks.anyOpen) return { ...last, frames: withOpening(last.frames) };
    afterBlocks = last;
    return { frames: withOpening(blocks.stopFirst()) };
  };

  return {
    describe: () => described,
    translate(message) {
      if (ended) return CONTINUE;
      // Comments keep idle connections alive on the caller's side too.
      if (message.kind === 'comment') return { frames: `: ${message.text}\n\n` };
      const { data, type } = typedEvent(message);
      switch (type) {
        case 'message_start': {
          const start = isObject(data['message']) ? data['message'] : {};
          chunks.useId(start['id']);
          described = { id: start['id'], model: start['model'], finishReasons: described.finishReasons };
          counts = mergeCounts(counts, start['usage']);
          return withUsage(CONTINUE);
        }
        case 'content_block_start':
          return { frames: withOpening(blocks.start(data['index'], data['content_block'], rawValueOf(message.data, 'content_block'))) };
        case 'content_block_delta':
          return { frames: withOpening(blocks.delta(data['index'], data['delta'])) };
        case 'content_block_stop':
          return { frames: withOpening(blocks.stop(data['index'])) };
        case 'message_delta': {
          counts = mergeCounts(counts, data['usage']);
          const delta = isObject(data['delta']) ? data['delta'] : {};
          if (delta['stop_reason'] != null) described.finishReasons = [delta['stop_reason']];
          const finishReason = finished ? null : finishReasonOf(delta['stop_reason']);
          // A delta without a stop reason (usage alone) ends nothing. Blocks close before the finish chunk:
          // the caller's last tool-call fragment never follows it.
          return withUsage(finishReason === null ? CONTINUE : closeBlocksThen({ frames: finish(finishReason) }));
        }
        case 'message_stop': {
          ended = true;
          let frames = finished ? '' : finish('stop');
          if (includeUsage && counts) frames += chunks.usage(openAIUsage(counts).caller);
          return closeBlocksThen(withUsage({ frames: frames + SSE_DONE, end: 'done' }));
        }
        case 'error': {
          ended = true;
          const fields = streamErrorFields(data);
          return withUsage({ frames: sseError(providerStreamErrorBody(fields, providerId)), end: 'error', failure: failureOf(fields) });
        }
        default:
          // ping, and event types added after this was written (Anthropic's versioning policy allows them).
          return CONTINUE;
      }
    },
    owed() {
      if (afterBlocks === undefined) return undefined;
      if (blocks.anyOpen) return { frames: blocks.stopFirst() };
      const last = afterBlocks;
      afterBlocks = undefined;
      return last;
    },
  };
}

/**
 * The HTTP status Anthropic documents for each error type, for an error event sent before the first content:
 * the gateway answers it as it would that status. An unknown type is the provider's own failure (500).
 */
const STATUS_OF_ERROR_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** An error event as the HTTP failure it stands for (before the first content it is answered, or failed over, as that). */
export function anthropicStreamFailure(data: Record<string, unknown>): StreamFailure {
  return failureOf(streamErrorFields(data));
}

function failureOf(fields: StreamErrorFields): StreamFailure {
  return { status: statusOf(fields.providerCode), details: { message: fields.message, code: fields.providerCode } };
}

function statusOf(errorType: string | null): number {
  return (errorType !== null && Object.hasOwn(STATUS_OF_ERROR_TYPE, errorType) ? STATUS_OF_ERROR_TYPE[errorType] : undefined) ?? 500;
}

/** What Anthropic's `{"type":"error","error":{"type","message"}}` event says, for the gateway's final error event. */
function streamErrorFields(data: Record<string, unknown>): StreamErrorFields {
  const error = anthropicErrorOf(data);
  const message = error?.message ?? (typeof data['error'] === 'string' && data['error'] !== '' ? data['error'] : null);
  return { message, type: error?.type ?? null, code: null, param: null, providerCode: error?.type ?? null };
}
