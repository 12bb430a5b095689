import { SSE_DONE, sseError } from '../../wire/sse-format.js';
import type { StreamContext, StreamStep, StreamTranslator } from '../dialect.js';
import { providerStreamErrorBody } from '../stream-error.js';
import { ChunkWriter } from './chunks.js';
import { anthropicErrorOf } from './errors.js';
import { finishReasonOf } from './finish-reason.js';
import { isObject, parseJson, rawValueOf } from './json-values.js';
import { ContentBlocks } from './stream-blocks.js';
import { mergeCounts, openAIUsage, type AnthropicCounts } from './usage.js';

const CONTINUE: StreamStep = { frames: '' };

/**
 * Anthropic's Messages event stream as OpenAI chat.completion chunks, for one answer. The data's
 * `type` names the event (the SSE `event:` line only when the data has none); pings and event types
 * this gateway does not know send nothing. Usage is cumulative in Anthropic's events, so the latest
 * figures stand; they go to the caller in a final `choices: []` chunk only when it asked
 * (`stream_options.include_usage`), and to the gateway's accounting always. Nothing after
 * message_stop or an error event is read.
 */
export function createAnthropicStreamTranslator({ routingModel, providerId, includeUsage }: StreamContext): StreamTranslator {
  const chunks = new ChunkWriter(routingModel);
  const blocks = new ContentBlocks(chunks);
  let opened = false;
  let finished = false;
  let ended = false;
  let counts: AnthropicCounts | undefined;

  /** The first chunk of every answer: the role, and an empty content. */
  const opening = (): string => {
    if (opened) return '';
    opened = true;
    return chunks.delta('{"role":"assistant","content":""}');
  };
  const finish = (finishReason: string): string => {
    finished = true;
    return chunks.delta('{}', finishReason);
  };
  const withUsage = (step: StreamStep): StreamStep => (counts ? { ...step, usage: openAIUsage(counts).accounting } : step);

  return {
    translate(message) {
      if (ended) return CONTINUE;
      // Comments keep idle connections alive on the caller's side too.
      if (message.kind === 'comment') return { frames: `: ${message.text}\n\n` };
      const parsed = parseJson(message.data);
      const data = isObject(parsed) ? parsed : {};
      const type = typeof data['type'] === 'string' ? data['type'] : message.event;
      switch (type) {
        case 'message_start': {
          const start = isObject(data['message']) ? data['message'] : {};
          chunks.useId(start['id']);
          counts = mergeCounts(counts, start['usage']);
          return withUsage({ frames: opening() });
        }
        case 'content_block_start':
          return { frames: opening() + blocks.start(data['index'], data['content_block'], rawValueOf(message.data, 'content_block')) };
        case 'content_block_delta':
          return { frames: opening() + blocks.delta(data['index'], data['delta']) };
        case 'content_block_stop':
          return { frames: opening() + blocks.stop(data['index']) };
        case 'message_delta': {
          counts = mergeCounts(counts, data['usage']);
          const delta = isObject(data['delta']) ? data['delta'] : {};
          const finishReason = finished ? null : finishReasonOf(delta['stop_reason']);
          // A delta without a stop reason (usage alone) ends nothing. Blocks close before the finish chunk:
          // the caller's last tool-call fragment never follows it.
          return withUsage({ frames: opening() + (finishReason === null ? '' : blocks.stopAll() + finish(finishReason)) });
        }
        case 'message_stop': {
          ended = true;
          let frames = opening() + blocks.stopAll() + (finished ? '' : finish('stop'));
          if (includeUsage && counts) frames += chunks.usage(openAIUsage(counts).caller);
          return withUsage({ frames: frames + SSE_DONE, end: 'done' });
        }
        case 'error':
          ended = true;
          return withUsage({ frames: sseError(streamErrorBody(data, providerId)), end: 'error' });
        default:
          // ping, and event types added after this was written (Anthropic's versioning policy allows them).
          return CONTINUE;
      }
    },
  };
}

/** Anthropic's `{"type":"error","error":{"type","message"}}` event as the gateway's final error event. */
function streamErrorBody(data: Record<string, unknown>, providerId: string) {
  const error = anthropicErrorOf(data);
  const message = error?.message ?? (typeof data['error'] === 'string' && data['error'] !== '' ? data['error'] : null);
  return providerStreamErrorBody({ message, type: error?.type ?? null, code: null, param: null, providerCode: error?.type ?? null }, providerId);
}
