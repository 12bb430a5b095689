import type { TranslatedResponse } from '../dialect.js';
import { isObject, parseJson } from '../json-values.js';
import { finishReasonOf } from './finish-reason.js';
import { candidatesOf, extraContent, partsOf, promptBlocked, readParts, type IndexedCandidate, type ToolCallOut } from './parts.js';
import { openAIUsage } from './usage.js';

/**
 * A generateContent answer as an OpenAI chat.completion: one choice per candidate (`n` asks Gemini for
 * candidateCount), at the candidate's index: its text as `content`, its thoughts as `reasoning_content`, its
 * function calls as `tool_calls` (thought signatures in `extra_content`), its own finish reason. A blocked
 * prompt (no candidates, a blockReason) is one empty choice filtered. Usage, for all candidates, once.
 * Undefined when the text is not such an answer (two candidates at one index included).
 */
export function readGeminiResponse(text: string, routingModel: string): TranslatedResponse | undefined {
  const parsed = parseJson(text);
  if (!isObject(parsed)) return undefined;
  const candidates = candidatesOf(parsed);
  if (candidates === undefined) return undefined;
  let choices: string[];
  if (candidates.length > 0) {
    candidates.sort((a, b) => a.index - b.index);
    if (candidates.some((entry, i) => i > 0 && candidates[i - 1]!.index === entry.index)) return undefined;
    choices = candidates.map(choiceOf);
  } else if (promptBlocked(parsed)) {
    choices = [`{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"content_filter"}`];
  } else {
    return undefined;
  }
  const usage = openAIUsage(parsed['usageMetadata']) ?? null;
  const id = typeof parsed['responseId'] === 'string' && parsed['responseId'] !== '' ? parsed['responseId'] : `chatcmpl-${crypto.randomUUID()}`;
  const head = `"id":${JSON.stringify(id)},"object":"chat.completion","created":${Math.floor(Date.now() / 1000)},"model":${JSON.stringify(routingModel)}`;
  return { text: `{${head},"choices":[${choices.join(',')}]${usage ? `,"usage":${JSON.stringify(usage)}` : ''}}`, usage };
}

/** One candidate as the OpenAI choice at its index. */
function choiceOf({ index, candidate }: IndexedCandidate): string {
  const pending = { signature: undefined as string | undefined };
  const parts = readParts(partsOf(candidate), pending);
  const messageSignature = parts.messageSignature ?? pending.signature;
  const reason = candidate['finishReason'];
  const finishReason = finishReasonOf(typeof reason === 'string' ? reason : 'STOP', parts.calls.length > 0);
  const fields = [`"role":"assistant"`, `"content":${parts.text === '' ? 'null' : JSON.stringify(parts.text)}`];
  if (parts.reasoning !== '') fields.push(`"reasoning_content":${JSON.stringify(parts.reasoning)}`);
  if (parts.calls.length > 0) fields.push(`"tool_calls":[${parts.calls.map(toolCall).join(',')}]`);
  if (messageSignature) fields.push(`"extra_content":${extraContent(messageSignature)}`);
  return `{"index":${index},"message":{${fields.join(',')}},"finish_reason":${JSON.stringify(finishReason)}}`;
}

/** One call as OpenAI's tool_calls item. */
export function toolCall(call: ToolCallOut, index?: number): string {
  const at = index === undefined ? '' : `"index":${index},`;
  const signature = call.signature ? `,"extra_content":${extraContent(call.signature)}` : '';
  return `{${at}"id":${JSON.stringify(call.id)},"type":"function","function":{"name":${JSON.stringify(call.name)},"arguments":${JSON.stringify(call.arguments)}}${signature}}`;
}
