import type { ErrorBody } from '../../generated/types/error-envelope.js';
import type { StreamFrames } from '../../routing/answer-writer.js';
import { answerChoice, chatEventReader } from '../chat-answer.js';
import { isObject } from '../inbound-fields.js';
import { anthropicUsage, messageId, stopReasonOf } from './answer.js';
import { anthropicErrorEvent } from './errors.js';

/**
 * Chat chunks as Anthropic's event stream: message_start, ping, one content block at a time (thinking, text,
 * tool_use with input_json_delta), message_delta with the stop reason and usage, message_stop.
 */
export function messagesStream(routingModel: string): StreamFrames {
  let started = false;
  let finished = false;
  let blockIndex = -1;
  let open: { kind: 'thinking' | 'text' } | { kind: 'tool'; chatIndex: number } | undefined;
  let finishReason: unknown = null;
  let usage: unknown;

  const event = (type: string, fields: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
  const start = (): string => {
    if (started) return '';
    started = true;
    const message = { id: messageId(), type: 'message', role: 'assistant', model: routingModel, content: [], stop_reason: null, stop_sequence: null, usage: anthropicUsage(undefined) };
    return event('message_start', { message }) + event('ping', {});
  };
  const close = (): string => {
    if (!open) return '';
    open = undefined;
    return event('content_block_stop', { index: blockIndex });
  };
  const begin = (block: Record<string, unknown>, next: NonNullable<typeof open>): string => {
    const frames = close();
    open = next;
    blockIndex++;
    return frames + event('content_block_start', { index: blockIndex, content_block: block });
  };
  const delta = (fields: Record<string, unknown>) => event('content_block_delta', { index: blockIndex, delta: fields });

  const chunk = (data: Record<string, unknown>): string => {
    if (data['usage'] !== undefined && data['usage'] !== null) usage = data['usage'];
    const choice = answerChoice(data);
    if (!choice) return '';
    const fields = isObject(choice['delta']) ? choice['delta'] : {};
    let frames = '';
    const reasoning = fields['reasoning_content'];
    if (typeof reasoning === 'string' && reasoning !== '') {
      if (open?.kind !== 'thinking') frames += begin({ type: 'thinking', thinking: '', signature: '' }, { kind: 'thinking' });
      frames += delta({ type: 'thinking_delta', thinking: reasoning });
    }
    const text = fields['content'];
    if (typeof text === 'string' && text !== '') {
      if (open?.kind !== 'text') frames += begin({ type: 'text', text: '' }, { kind: 'text' });
      frames += delta({ type: 'text_delta', text });
    }
    if (Array.isArray(fields['tool_calls'])) {
      for (const call of fields['tool_calls']) {
        if (!isObject(call)) continue;
        const chatIndex = typeof call['index'] === 'number' ? call['index'] : 0;
        const fn = isObject(call['function']) ? call['function'] : {};
        if (open?.kind !== 'tool' || open.chatIndex !== chatIndex) {
          const id = typeof call['id'] === 'string' ? call['id'] : `toolu_${messageId()}`;
          frames += begin({ type: 'tool_use', id, name: typeof fn['name'] === 'string' ? fn['name'] : '', input: {} }, { kind: 'tool', chatIndex });
        }
        if (typeof fn['arguments'] === 'string' && fn['arguments'] !== '') frames += delta({ type: 'input_json_delta', partial_json: fn['arguments'] });
      }
    }
    if (choice['finish_reason'] !== null && choice['finish_reason'] !== undefined) finishReason = choice['finish_reason'];
    return frames;
  };

  const end = (): string => {
    finished = true;
    const counts = anthropicUsage(usage);
    return (
      close() +
      event('message_delta', { delta: { stop_reason: stopReasonOf(finishReason), stop_sequence: null }, usage: counts }) +
      event('message_stop', {})
    );
  };
  const failed = (body: ErrorBody): string => {
    if (finished) return '';
    finished = true;
    return start() + anthropicErrorEvent(body);
  };

  const read = chatEventReader({ chunk, done: end, error: failed, finished: () => finished });
  return {
    frames(text) {
      if (finished) return '';
      return start() + read(text);
    },
    error: failed,
  };
}
