import type { Usage } from '../generated/types/usage.js';
import { sseData } from '../wire/sse-format.js';

/** One tool call's piece of a delta: its start (id, name) or a fragment of its arguments. */
export type ToolCallDelta =
  | { readonly index: number; readonly id: string; readonly name: string }
  | { readonly index: number; readonly arguments: string };

/**
 * Writes OpenAI chat.completion.chunk events with one id and created for the whole stream and the
 * routing string as model (the dialects that translate streams into chat chunks share it). The id is the
 * provider's message id once its stream gave it.
 */
export class ChunkWriter {
  private readonly created = Math.floor(Date.now() / 1000);
  private head: string | undefined;
  private id: string | undefined;

  constructor(private readonly routingModel: string) {}

  /** The provider's id, taken only before the first chunk went out (one id per stream). */
  useId(id: unknown): void {
    if (this.head === undefined && this.id === undefined && typeof id === 'string' && id !== '') this.id = id;
  }

  /** A chunk whose only choice (the `choice`-th, for an answer of several) carries `delta` (a JSON object text) and `finishReason`. */
  delta(delta: string, finishReason: string | null = null, choice = 0): string {
    return sseData(`${this.start()},"choices":[{"index":${choice},"delta":${delta},"finish_reason":${JSON.stringify(finishReason)}}]}`);
  }

  text(field: 'content' | 'reasoning_content', value: string, choice = 0): string {
    return this.delta(`{${JSON.stringify(field)}:${JSON.stringify(value)}}`, null, choice);
  }

  toolCall(call: ToolCallDelta): string {
    const item =
      'id' in call
        ? `{"index":${call.index},"id":${JSON.stringify(call.id)},"type":"function","function":{"name":${JSON.stringify(call.name)},"arguments":""}}`
        : `{"index":${call.index},"function":{"arguments":${JSON.stringify(call.arguments)}}}`;
    return this.delta(`{"tool_calls":[${item}]}`);
  }

  /** `block` is a JSON object text, spliced as it is. */
  thinkingBlock(block: string): string {
    return this.delta(`{"thinking_blocks":[${block}]}`);
  }

  /** The usage chunk OpenAI sends last when asked: no choices. */
  usage(usage: Usage): string {
    return sseData(`${this.start()},"choices":[],"usage":${JSON.stringify(usage)}}`);
  }

  private start(): string {
    this.head ??= `{"id":${JSON.stringify(this.id ?? `chatcmpl-${crypto.randomUUID()}`)},"object":"chat.completion.chunk","created":${this.created},"model":${JSON.stringify(this.routingModel)}`;
    return this.head;
  }
}
