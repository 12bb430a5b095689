import type { TranslatedResponse } from '../dialect.js';
import { isObject, parseJson } from '../json-values.js';
import { finishReasonOf } from './finish-reason.js';
import { extraContent, firstCandidate, partsOf, promptBlocked, readParts, type ToolCallOut } from './parts.js';
import { openAIUsage } from './usage.js';

/**
 * A generateContent answer as an OpenAI chat.completion: the first candidate's text as `content`, its
 * thoughts as `reasoning_content`, its function calls as `tool_calls` (thought signatures in
 * `extra_content`). A blocked prompt (no candidates, a blockReason) is one empty choice filtered.
 * Undefined when the text is not such an answer.
 */
export function readGeminiResponse(text: string, routingModel: string): TranslatedResponse | undefined {
  const parsed = parseJson(text);
  if (!isObject(parsed)) return undefined;
  const candidate = firstCandidate(parsed);
  const blocked = candidate === undefined && promptBlocked(parsed);
  if (!candidate && !blocked) return undefined;
  const pending = { signature: undefined as string | undefined };
  const parts = readParts(partsOf(candidate), pending);
  const messageSignature = parts.messageSignature ?? pending.signature;
  const reason = candidate?.['finishReason'];
  const finishReason = blocked ? 'content_filter' : finishReasonOf(typeof reason === 'string' ? reason : 'STOP', parts.calls.length > 0);
  const fields = [`"role":"assistant"`, `"content":${parts.text === '' ? 'null' : JSON.stringify(parts.text)}`];
  if (parts.reasoning !== '') fields.push(`"reasoning_content":${JSON.stringify(parts.reasoning)}`);
  if (parts.calls.length > 0) fields.push(`"tool_calls":[${parts.calls.map(toolCall).join(',')}]`);
  if (messageSignature) fields.push(`"extra_content":${extraContent(messageSignature)}`);
  const usage = openAIUsage(parsed['usageMetadata']) ?? null;
  const id = typeof parsed['responseId'] === 'string' && parsed['responseId'] !== '' ? parsed['responseId'] : `chatcmpl-${crypto.randomUUID()}`;
  const choice = `{"index":0,"message":{${fields.join(',')}},"finish_reason":${JSON.stringify(finishReason)}}`;
  const head = `"id":${JSON.stringify(id)},"object":"chat.completion","created":${Math.floor(Date.now() / 1000)},"model":${JSON.stringify(routingModel)}`;
  return { text: `{${head},"choices":[${choice}]${usage ? `,"usage":${JSON.stringify(usage)}` : ''}}`, usage };
}

/** One call as OpenAI's tool_calls item. */
export function toolCall(call: ToolCallOut, index?: number): string {
  const at = index === undefined ? '' : `"index":${index},`;
  const signature = call.signature ? `,"extra_content":${extraContent(call.signature)}` : '';
  return `{${at}"id":${JSON.stringify(call.id)},"type":"function","function":{"name":${JSON.stringify(call.name)},"arguments":${JSON.stringify(call.arguments)}}${signature}}`;
}
