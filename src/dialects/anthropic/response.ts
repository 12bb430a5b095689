import type { TranslatedResponse } from '../dialect.js';
import { finishReasonOf } from './finish-reason.js';
import { arrayElementSpans, isObject, parseJson, rawValueOf } from './json-values.js';
import { mergeCounts, openAIUsage } from './usage.js';

/** What one answer's content blocks become in an OpenAI message. */
interface MessageParts {
  texts: string[];
  reasoning: string[];
  /** Raw JSON texts, spliced as they came. */
  thinkingBlocks: string[];
  toolCalls: string[];
}

/**
 * A non-streamed Messages answer as an OpenAI chat.completion. Values the caller may send back (tool
 * inputs as `arguments`, thinking blocks with their signatures) are the provider's own bytes, never
 * re-serialised: numbers beyond double precision and key order survive. Undefined when the text is not
 * a Messages answer (no content array); a block field of the wrong type is treated as absent.
 */
export function readAnthropicResponse(text: string, routingModel: string): TranslatedResponse | undefined {
  const parsed = parseJson(text);
  if (!isObject(parsed) || !Array.isArray(parsed['content'])) return undefined;
  const contentText = rawValueOf(text, 'content');
  const spans = contentText === undefined ? undefined : arrayElementSpans(contentText);
  // JSON.parse and the scanner read the same text; a disagreement would be a bug, never an answer.
  if (contentText === undefined || !spans || spans.length !== parsed['content'].length) return undefined;
  const parts: MessageParts = { texts: [], reasoning: [], thinkingBlocks: [], toolCalls: [] };
  parsed['content'].forEach((block: unknown, i) => readBlock(block, contentText.slice(spans[i]!.start, spans[i]!.end), parts));

  const message: string[] = [
    `"role":"assistant"`,
    `"content":${parts.texts.length > 0 ? JSON.stringify(parts.texts.join('')) : 'null'}`,
    `"refusal":null`,
  ];
  if (parts.toolCalls.length > 0) message.push(`"tool_calls":[${parts.toolCalls.join(',')}]`);
  if (parts.reasoning.length > 0) message.push(`"reasoning_content":${JSON.stringify(parts.reasoning.join(''))}`);
  if (parts.thinkingBlocks.length > 0) message.push(`"thinking_blocks":[${parts.thinkingBlocks.join(',')}]`);
  const choice = `{"index":0,"message":{${message.join(',')}},"finish_reason":${JSON.stringify(finishReasonOf(parsed['stop_reason']))},"logprobs":null}`;

  const counts = mergeCounts(undefined, parsed['usage']);
  const usage = counts ? openAIUsage(counts) : undefined;
  const id = typeof parsed['id'] === 'string' && parsed['id'] !== '' ? parsed['id'] : `chatcmpl-${crypto.randomUUID()}`;
  const head = `{"id":${JSON.stringify(id)},"object":"chat.completion","created":${Math.floor(Date.now() / 1000)},"model":${JSON.stringify(routingModel)}`;
  return {
    text: `${head},"choices":[${choice}]${usage ? `,"usage":${JSON.stringify(usage.caller)}` : ''}}`,
    usage: usage?.accounting ?? null,
    described: { id: parsed['id'], model: parsed['model'], finishReasons: [parsed['stop_reason']] },
  };
}

function readBlock(block: unknown, raw: string, parts: MessageParts): void {
  if (!isObject(block)) return;
  switch (block['type']) {
    case 'text':
      if (typeof block['text'] === 'string') parts.texts.push(block['text']);
      return;
    case 'thinking':
      if (typeof block['thinking'] === 'string') parts.reasoning.push(block['thinking']);
      parts.thinkingBlocks.push(raw);
      return;
    case 'redacted_thinking':
      parts.thinkingBlocks.push(raw);
      return;
    case 'tool_use':
      parts.toolCalls.push(toolCall(block, raw));
      return;
    default:
      // Server tools (web search, code execution) ran at the provider; their blocks have no OpenAI form.
      return;
  }
}

/** A tool_use block as an OpenAI tool call; `arguments` is the input's own text (`{}` when absent or null). */
function toolCall(block: Record<string, unknown>, raw: string): string {
  const input = block['input'] === undefined || block['input'] === null ? undefined : rawValueOf(raw, 'input');
  const fn = `{"name":${JSON.stringify(stringOr(block['name']))},"arguments":${JSON.stringify(input ?? '{}')}}`;
  return `{"id":${JSON.stringify(stringOr(block['id']))},"type":"function","function":${fn}}`;
}

function stringOr(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
