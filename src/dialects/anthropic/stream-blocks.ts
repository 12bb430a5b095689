import { scanTopLevel } from '../../wire/json-top-level.js';
import { editTopLevel } from '../../wire/json-top-level-edit.js';
import { StreamLimitError, type StreamBudget } from '../stream-budget.js';
import type { ChunkWriter } from '../chunk-writer.js';
import { isObject, rawValueOf } from './json-values.js';

/** What the stream knows about one open content block. */
type Block =
  | { readonly kind: 'text' }
  | { readonly kind: 'tool'; readonly toolIndex: number; sawArguments: boolean; readonly startInput: string | undefined }
  | { readonly kind: 'thinking'; readonly raw: string; thinking: string; signature: string | undefined }
  | { readonly kind: 'redacted'; readonly raw: string }
  | { readonly kind: 'other' };

/** A block index as the provider sent it; every event without a numeric index shares one key. */
type BlockKey = number | null;

const keyOf = (index: unknown): BlockKey => (typeof index === 'number' ? index : null);

/**
 * Content blocks open at once in one stream (docs/chat-completions.md). A sound answer opens one at a time
 * and stops it before the next; more than this is refused, since each open block is held until it stops.
 */
export const MAX_OPEN_BLOCKS = 64;

/**
 * The content blocks of one streamed answer, as OpenAI deltas. Tool calls are numbered from 0 in the
 * order their blocks start (Anthropic's block index counts text and thinking too); a tool call that got
 * no argument text ends as `{}`; a thinking block, once it stops, is sent whole with its signature as
 * `thinking_blocks` so a client can send it back. Only open blocks are held, at most MAX_OPEN_BLOCKS,
 * and what they hold is charged to the stream's budget.
 */
export class ContentBlocks {
  private readonly open = new Map<BlockKey, Block>();
  private toolCalls = 0;

  constructor(
    private readonly chunks: ChunkWriter,
    private readonly budget: StreamBudget,
  ) {}

  /** Whether a block is still open. */
  get anyOpen(): boolean {
    return this.open.size > 0;
  }

  /** content_block_start; `raw` is the text of its content_block. */
  start(index: unknown, block: unknown, raw: string | undefined): string {
    const key = keyOf(index);
    // A second start for an open index (never from a sound provider) closes the first one properly.
    let frames = this.stop(index);
    if (this.open.size >= MAX_OPEN_BLOCKS) throw new StreamLimitError(`sent a stream with more than ${MAX_OPEN_BLOCKS} content blocks open at once`);
    const fields = isObject(block) ? block : {};
    const text = (field: string) => (typeof fields[field] === 'string' ? (fields[field] as string) : '');
    switch (fields['type']) {
      case 'text':
        this.open.set(key, { kind: 'text' });
        if (text('text') !== '') frames += this.chunks.text('content', text('text'));
        return frames;
      case 'thinking':
        this.budget.hold((raw?.length ?? 0) + text('thinking').length);
        this.open.set(key, { kind: 'thinking', raw: raw ?? '{"type":"thinking"}', thinking: text('thinking'), signature: undefined });
        if (text('thinking') !== '') frames += this.chunks.text('reasoning_content', text('thinking'));
        return frames;
      case 'redacted_thinking':
        this.budget.hold(raw?.length ?? 0);
        this.open.set(key, { kind: 'redacted', raw: raw ?? '{"type":"redacted_thinking"}' });
        return frames;
      case 'tool_use': {
        const toolIndex = this.toolCalls++;
        const input = fields['input'];
        // Input normally streams in deltas after an empty `{}`; one given whole at the start stands when none follow.
        const startInput = isObject(input) && Object.keys(input).length > 0 && raw !== undefined ? rawValueOf(raw, 'input') : undefined;
        if (startInput !== undefined) this.budget.hold(startInput.length);
        this.open.set(key, { kind: 'tool', toolIndex, sawArguments: false, startInput });
        return frames + this.chunks.toolCall({ index: toolIndex, id: text('id'), name: text('name') });
      }
      default:
        // Server tool calls and their results ran at the provider: nothing for the caller to answer.
        this.open.set(key, { kind: 'other' });
        return frames;
    }
  }

  /** content_block_delta. */
  delta(index: unknown, delta: unknown): string {
    if (!isObject(delta)) return '';
    const block = this.open.get(keyOf(index));
    switch (delta['type']) {
      case 'text_delta':
        return typeof delta['text'] === 'string' && delta['text'] !== '' ? this.chunks.text('content', delta['text']) : '';
      case 'thinking_delta': {
        const thinking = delta['thinking'];
        if (typeof thinking !== 'string' || thinking === '') return '';
        if (block?.kind === 'thinking') {
          this.budget.hold(thinking.length);
          block.thinking += thinking;
        }
        return this.chunks.text('reasoning_content', thinking);
      }
      case 'signature_delta':
        // The signature arrives whole just before the block stops; a later one replaces it, as Anthropic's SDKs do.
        if (block?.kind === 'thinking' && typeof delta['signature'] === 'string') {
          this.budget.hold(delta['signature'].length);
          block.signature = delta['signature'];
        }
        return '';
      case 'input_json_delta': {
        const fragment = delta['partial_json'];
        if (block?.kind !== 'tool' || typeof fragment !== 'string' || fragment === '') return '';
        if (!block.sawArguments && /\S/.test(fragment)) block.sawArguments = true;
        return this.chunks.toolCall({ index: block.toolIndex, arguments: fragment });
      }
      default:
        return '';
    }
  }

  /** content_block_stop: what the block still owes the caller. */
  stop(index: unknown): string {
    const key = keyOf(index);
    const block = this.open.get(key);
    if (!block) return '';
    this.open.delete(key);
    switch (block.kind) {
      case 'tool':
        return block.sawArguments ? '' : this.chunks.toolCall({ index: block.toolIndex, arguments: block.startInput ?? '{}' });
      case 'thinking':
        return this.chunks.thinkingBlock(completeThinkingBlock(block));
      case 'redacted':
        return this.chunks.thinkingBlock(block.raw);
      default:
        return '';
    }
  }

  /** Closes the block open longest (the answer ended without its stop event): called until none is open, one block's frames at a time. */
  stopFirst(): string {
    for (const key of this.open.keys()) return this.stop(key);
    return '';
  }
}

/** The block as content_block_start gave it (other fields kept as sent), with its whole text and signature. */
function completeThinkingBlock(block: { raw: string; thinking: string; signature: string | undefined }): string {
  const scan = scanTopLevel(block.raw);
  const edits = new Map([['thinking', JSON.stringify(block.thinking)]]);
  if (block.signature !== undefined) edits.set('signature', JSON.stringify(block.signature));
  return scan ? editTopLevel(block.raw, scan, edits) : `{"type":"thinking",${[...edits].map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
}
