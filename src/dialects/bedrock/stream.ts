import type { Usage } from '../../generated/types/usage.js';
import { SSE_DONE, sseError } from '../../wire/sse-format.js';
import { gatewayError } from '../../wire/gateway-error.js';
import { ChunkWriter } from '../chunk-writer.js';
import type { StreamContext, StreamStep } from '../dialect.js';
import { isObject, parseJson } from '../json-values.js';
import { StreamBudget, StreamLimitError } from '../stream-budget.js';
import { providerStreamErrorBody } from '../stream-error.js';
import { MAX_OPEN_BLOCKS } from '../anthropic/stream-blocks.js';
import { bedrockStreamFailure } from './errors.js';
import type { EventMessage } from './event-stream.js';
import { finishReasonOf } from './finish-reason.js';
import { thinkingBlock } from './response.js';
import { openAIUsage } from './usage.js';

const CONTINUE: StreamStep = { frames: '' };

/** An open content block the stream still owes something for when it stops. */
type Block =
  | { readonly kind: 'tool'; readonly index: number; gotInput: boolean }
  | { readonly kind: 'reasoning'; text: string; signature: string | undefined; redacted: string | undefined };

/** Translates ConverseStream's decoded messages into chat.completion.chunk events, one message at a time. */
export interface BedrockStreamTranslator {
  translate(message: EventMessage): StreamStep;
  /** The body ended between messages: the finishing step when messageStop came (metadata may not), else undefined. */
  end(): StreamStep | undefined;
  describe(): { id: unknown; model: unknown; finishReasons: readonly unknown[] };
}

/**
 * ConverseStream events as OpenAI chunks: messageStart holds (nothing the caller needs yet, so it does not
 * commit the stream); text deltas are content deltas; a toolUse block start is a tool call numbered from 0
 * among tool calls, its input pieces argument deltas (`{}` when it got none); reasoning deltas are
 * reasoning_content, and the block's whole text and signature one thinking_blocks delta when it stops;
 * messageStop is the finish_reason chunk; metadata the usage (its chunk when the caller asked), then [DONE].
 * An exception message ends the stream in error, as the HTTP status it stands for when it comes first.
 */
export function createBedrockStreamTranslator({ routingModel, providerId, includeUsage, maxHeldChars, holdings }: StreamContext): BedrockStreamTranslator {
  const chunks = new ChunkWriter(routingModel);
  const budget = new StreamBudget(maxHeldChars ?? Infinity, holdings);
  const blocks = new Map<number, Block>();
  let toolCalls = 0;
  let opened = false;
  let stopReason: unknown;
  let stopped = false;
  let ended = false;
  let usage: Usage | undefined;

  const opening = (): string => {
    if (opened) return '';
    opened = true;
    return chunks.delta('{"role":"assistant","content":""}');
  };
  const finish = (): StreamStep => {
    ended = true;
    const frames = includeUsage && usage ? chunks.usage(usage) : '';
    return { frames: frames + SSE_DONE, end: 'done', ...(usage ? { usage } : {}) };
  };
  const fail = (exceptionType: string | undefined, payload: unknown): StreamStep => {
    ended = true;
    const failure = bedrockStreamFailure(exceptionType, payload);
    const fields = { message: failure.details.message, type: null, code: null, param: null, providerCode: failure.details.code };
    return { frames: sseError(providerStreamErrorBody(fields, providerId)), end: 'error', failure, ...(usage ? { usage } : {}) };
  };
  const blockAt = (index: unknown): number => (Number.isSafeInteger(index) ? (index as number) : -1);
  const open = (index: number, block: Block) => {
    if (!blocks.has(index) && blocks.size >= MAX_OPEN_BLOCKS) throw new StreamLimitError(`sent a stream with more than ${MAX_OPEN_BLOCKS} content blocks open at once`);
    blocks.set(index, block);
  };

  const start = (event: Record<string, unknown>): string => {
    const started = isObject(event['start']) ? event['start']['toolUse'] : undefined;
    if (!isObject(started)) return '';
    const id = typeof started['toolUseId'] === 'string' ? started['toolUseId'] : '';
    const name = typeof started['name'] === 'string' ? started['name'] : '';
    const index = toolCalls++;
    open(blockAt(event['contentBlockIndex']), { kind: 'tool', index, gotInput: false });
    return opening() + chunks.toolCall({ index, id, name });
  };

  const delta = (event: Record<string, unknown>): string => {
    const change = isObject(event['delta']) ? event['delta'] : {};
    const at = blockAt(event['contentBlockIndex']);
    if (typeof change['text'] === 'string') return change['text'] === '' ? '' : opening() + chunks.text('content', change['text']);
    const tool = isObject(change['toolUse']) ? change['toolUse'] : undefined;
    const block = blocks.get(at);
    if (tool && typeof tool['input'] === 'string' && block?.kind === 'tool') {
      if (tool['input'] === '') return '';
      block.gotInput = true;
      return chunks.toolCall({ index: block.index, arguments: tool['input'] });
    }
    const thought = isObject(change['reasoningContent']) ? change['reasoningContent'] : undefined;
    if (!thought) return '';
    let held = block?.kind === 'reasoning' ? block : undefined;
    if (!held) open(at, (held = { kind: 'reasoning', text: '', signature: undefined, redacted: undefined }));
    const piece = (key: string) => (typeof thought[key] === 'string' ? (thought[key] as string) : undefined);
    const text = piece('text');
    const signature = piece('signature');
    const redacted = piece('redactedContent');
    if (signature !== undefined) {
      budget.hold(signature.length);
      held.signature = (held.signature ?? '') + signature;
    }
    if (redacted !== undefined) {
      budget.hold(redacted.length);
      held.redacted = (held.redacted ?? '') + redacted;
    }
    if (text === undefined || text === '') return '';
    budget.hold(text.length);
    held.text += text;
    return opening() + chunks.text('reasoning_content', text);
  };

  const stop = (event: Record<string, unknown>): string => {
    const at = blockAt(event['contentBlockIndex']);
    const block = blocks.get(at);
    blocks.delete(at);
    if (block?.kind === 'tool') return block.gotInput ? '' : chunks.toolCall({ index: block.index, arguments: '{}' });
    if (block?.kind !== 'reasoning') return '';
    const kept = block.redacted !== undefined
      ? thinkingBlock({ redactedContent: block.redacted }).block
      : thinkingBlock({ reasoningText: { text: block.text, ...(block.signature !== undefined ? { signature: block.signature } : {}) } }).block;
    return opening() + chunks.thinkingBlock(kept!);
  };

  return {
    describe: () => ({ id: null, model: null, finishReasons: stopReason === undefined ? [] : [stopReason] }),
    translate(message) {
      if (ended) return CONTINUE;
      const kind = message.headers.get(':message-type');
      const payload = parseJson(message.payload.toString('utf8'));
      if (kind === 'exception') return fail(message.headers.get(':exception-type'), payload);
      // The generic event-stream error message (`:error-code`, `:error-message`).
      if (kind === 'error') return fail(message.headers.get(':error-code'), { message: message.headers.get(':error-message') });
      if (kind !== 'event') return CONTINUE;
      if (!isObject(payload)) throw gatewayError('invalid_upstream_response', `The provider "${providerId}" sent an event whose payload is not a JSON object.`, { provider: providerId });
      switch (message.headers.get(':event-type')) {
        case 'contentBlockStart':
          return { frames: start(payload) };
        case 'contentBlockDelta':
          return { frames: delta(payload) };
        case 'contentBlockStop':
          return { frames: stop(payload) };
        case 'messageStop': {
          stopReason = payload['stopReason'];
          stopped = true;
          let frames = '';
          for (const at of [...blocks.keys()]) frames += stop({ contentBlockIndex: at });
          return { frames: frames + opening() + chunks.delta('{}', finishReasonOf(stopReason)) };
        }
        case 'metadata':
          usage = openAIUsage(payload['usage']) ?? usage;
          return stopped ? finish() : usage ? { frames: '', usage } : CONTINUE;
        default:
          // messageStart, and event types this gateway does not know.
          return CONTINUE;
      }
    },
    end() {
      return !ended && stopped ? finish() : undefined;
    },
  };
}
