import { randomUUID } from 'node:crypto';
import { isObject } from '../inbound-fields.js';

/** A chat finish_reason as Anthropic's stop_reason. */
export function stopReasonOf(finishReason: unknown): string {
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Chat usage in Anthropic's terms: input_tokens counts what was not read from the cache. */
export function anthropicUsage(usage: unknown): { input_tokens: number; output_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number } {
  const count = (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0);
  const fields = isObject(usage) ? usage : {};
  const details = isObject(fields['prompt_tokens_details']) ? fields['prompt_tokens_details'] : {};
  const cached = count(details['cached_tokens']);
  return {
    input_tokens: Math.max(0, count(fields['prompt_tokens']) - cached),
    output_tokens: count(fields['completion_tokens']),
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: 0,
  };
}

export const messageId = (): string => `msg_${randomUUID().replaceAll('-', '')}`;

/** A chat tool call's arguments as a tool_use input: the object they encode, or {} when they encode none. */
export function inputOf(args: unknown): unknown {
  if (typeof args !== 'string' || args.trim() === '') return {};
  try {
    const input: unknown = JSON.parse(args);
    return isObject(input) ? input : {};
  } catch {
    return {};
  }
}

/**
 * A non-streamed chat.completion as a Messages answer: reasoning as a thinking block (its signature empty:
 * only Anthropic signs thinking), the text, then each tool call as tool_use. Undefined without a choice.
 */
export function messageOfCompletion(completion: unknown, routingModel: string): Record<string, unknown> | undefined {
  if (!isObject(completion) || !Array.isArray(completion['choices']) || !isObject(completion['choices'][0])) return undefined;
  const choice = completion['choices'][0];
  const message = isObject(choice['message']) ? choice['message'] : {};
  const content: Record<string, unknown>[] = [];
  if (typeof message['reasoning_content'] === 'string' && message['reasoning_content'] !== '') content.push({ type: 'thinking', thinking: message['reasoning_content'], signature: '' });
  if (typeof message['content'] === 'string' && message['content'] !== '') content.push({ type: 'text', text: message['content'] });
  if (Array.isArray(message['tool_calls'])) {
    for (const call of message['tool_calls']) {
      const fn = isObject(call) && isObject(call['function']) ? call['function'] : {};
      content.push({ type: 'tool_use', id: isObject(call) && typeof call['id'] === 'string' ? call['id'] : `toolu_${randomUUID()}`, name: String(fn['name'] ?? ''), input: inputOf(fn['arguments']) });
    }
  }
  return {
    id: messageId(),
    type: 'message',
    role: 'assistant',
    model: routingModel,
    content,
    stop_reason: stopReasonOf(choice['finish_reason']),
    stop_sequence: null,
    usage: anthropicUsage(completion['usage']),
  };
}
