import type { TranslatedResponse } from '../dialect.js';
import { rootNode, type JsonNode } from '../anthropic/request/json-node.js';
import { isObject, parseJson } from '../json-values.js';
import { finishReasonOf } from './finish-reason.js';
import { openAIUsage } from './usage.js';

/**
 * A Converse answer as an OpenAI chat.completion: text blocks joined as `content`, toolUse blocks as
 * `tool_calls` whose arguments are the input's own JSON text (keys and numbers as Bedrock wrote them),
 * reasoningContent as `reasoning_content` and `thinking_blocks` (the anthropic dialect's fields, signatures
 * byte for byte). Undefined when the text is not a Converse answer (no output.message.content array).
 */
export function readBedrockResponse(text: string, routingModel: string): TranslatedResponse | undefined {
  const parsed = parseJson(text);
  if (!isObject(parsed)) return undefined;
  const output = parsed['output'];
  const message = isObject(output) ? output['message'] : undefined;
  if (!isObject(message) || !Array.isArray(message['content'])) return undefined;
  const blocks = rootNode(text, parsed).field('output')!.field('message')!.field('content')!.items();
  const texts: string[] = [];
  const reasoning: string[] = [];
  const thinkingBlocks: string[] = [];
  const toolCalls: string[] = [];
  for (const block of blocks) {
    if (!block.isObject) continue;
    const value = block.value as Record<string, unknown>;
    if (typeof value['text'] === 'string') texts.push(value['text']);
    const toolUse = block.field('toolUse');
    if (toolUse?.isObject) toolCalls.push(toolCall(toolUse));
    const thought = value['reasoningContent'];
    if (isObject(thought)) {
      const { text: said, block: kept } = thinkingBlock(thought);
      if (said !== '') reasoning.push(said);
      if (kept) thinkingBlocks.push(kept);
    }
  }
  const fields = [`"role":"assistant"`, `"content":${texts.length > 0 ? JSON.stringify(texts.join('')) : 'null'}`, `"refusal":null`];
  if (toolCalls.length > 0) fields.push(`"tool_calls":[${toolCalls.join(',')}]`);
  if (reasoning.length > 0) fields.push(`"reasoning_content":${JSON.stringify(reasoning.join(''))}`);
  if (thinkingBlocks.length > 0) fields.push(`"thinking_blocks":[${thinkingBlocks.join(',')}]`);
  const choice = `{"index":0,"message":{${fields.join(',')}},"finish_reason":${JSON.stringify(finishReasonOf(parsed['stopReason']))},"logprobs":null}`;
  const usage = openAIUsage(parsed['usage']) ?? null;
  const head = `"id":${JSON.stringify(`chatcmpl-${crypto.randomUUID()}`)},"object":"chat.completion","created":${Math.floor(Date.now() / 1000)},"model":${JSON.stringify(routingModel)}`;
  return {
    text: `{${head},"choices":[${choice}]${usage ? `,"usage":${JSON.stringify(usage)}` : ''}}`,
    usage,
    described: { id: null, model: null, finishReasons: [parsed['stopReason']] },
  };
}

/** A toolUse block as an OpenAI tool call; `arguments` is the input's own text (`{}` when absent or empty). */
function toolCall(toolUse: JsonNode): string {
  const id = toolUse.field('toolUseId')?.value;
  const name = toolUse.field('name')?.value;
  const input = toolUse.given('input');
  const args = input?.isObject && Object.keys(input.value as object).length > 0 ? input.raw : '{}';
  const fn = `{"name":${JSON.stringify(typeof name === 'string' ? name : '')},"arguments":${JSON.stringify(args)}}`;
  return `{"id":${JSON.stringify(typeof id === 'string' ? id : '')},"type":"function","function":${fn}}`;
}

/** A reasoningContent block: its text for reasoning_content, and the thinking block a caller sends back (JSON). */
export function thinkingBlock(content: Record<string, unknown>): { text: string; block: string | undefined } {
  const reasoningText = content['reasoningText'];
  if (isObject(reasoningText)) {
    const text = typeof reasoningText['text'] === 'string' ? reasoningText['text'] : '';
    const signature = typeof reasoningText['signature'] === 'string' ? `,"signature":${JSON.stringify(reasoningText['signature'])}` : '';
    return { text, block: `{"type":"thinking","thinking":${JSON.stringify(text)}${signature}}` };
  }
  const redacted = content['redactedContent'];
  return { text: '', block: typeof redacted === 'string' ? `{"type":"redacted_thinking","data":${JSON.stringify(redacted)}}` : undefined };
}
