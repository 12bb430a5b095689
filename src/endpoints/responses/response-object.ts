import { randomUUID } from 'node:crypto';
import type { ErrorBody } from '../../generated/types/error-envelope.js';
import { isObject } from '../inbound-fields.js';
import { encryptedContentOf } from './reasoning-replay.js';
import type { ResponsesRequest } from './request.js';

/**
 * What every response object of one request shares: its id, its time, its echo of the request. A stream keeps it
 * until it ends, so it holds nothing else of the request (never the chat request: docs/environment.md).
 */
export interface ResponseHead {
  readonly id: string;
  readonly createdAt: number;
  readonly routingModel: string;
  /** `include: ["reasoning.encrypted_content"]`. */
  readonly includeEncrypted: boolean;
  /** The request's fields as the response object repeats them, at most MAX_ECHO_CHARS of JSON. */
  readonly echo: Readonly<Record<string, unknown>>;
  /** The echo's JSON length: what it keeps of MAX_BODY_BYTES_IN_FLIGHT until the response closes. */
  readonly echoChars: number;
}

/**
 * The most of the request a response object echoes, in characters of JSON. A stream sends the echo in three
 * events (created, in_progress and the terminal one) and keeps it until it ends: past this, the largest fields
 * are echoed empty (`instructions: null`, `tools: []`, `metadata: {}`, …) until the rest fits.
 */
export const MAX_ECHO_CHARS = 256 * 1024;

/** What each echoed field says when it is not echoed: what the response object says when the request left it out. */
const UNECHOED: Readonly<Record<string, unknown>> = {
  instructions: null,
  metadata: {},
  tool_choice: 'auto',
  tools: [],
  text: { format: { type: 'text' } },
  reasoning: { effort: null, summary: null },
  user: null,
};

export function responseHead(routingModel: string, request: ResponsesRequest): ResponseHead {
  const { echo, chars } = boundedEcho(request.echo);
  return { id: `resp_${randomUUID().replaceAll('-', '')}`, createdAt: Math.floor(Date.now() / 1000), routingModel, includeEncrypted: request.includeEncrypted, echo, echoChars: chars };
}

function boundedEcho(echo: Readonly<Record<string, unknown>>): { echo: Record<string, unknown>; chars: number } {
  const sizes = Object.entries(echo).map(([field, value]) => [field, JSON.stringify(value)?.length ?? 0] as const);
  let chars = sizes.reduce((sum, [, size]) => sum + size, 0);
  const bounded = { ...echo };
  for (const [field, size] of [...sizes].sort((a, b) => b[1] - a[1])) {
    if (chars <= MAX_ECHO_CHARS) break;
    if (!(field in UNECHOED)) continue;
    bounded[field] = UNECHOED[field];
    chars += JSON.stringify(UNECHOED[field]).length - size;
  }
  return { echo: bounded, chars };
}

export const itemId = (prefix: string): string => `${prefix}_${randomUUID().replaceAll('-', '')}`;

/** The response object; `store` is always false: nothing is kept (docs/responses.md). */
export function responseObject(head: ResponseHead, status: string, output: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: head.id,
    object: 'response',
    created_at: head.createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    ...head.echo,
    model: head.routingModel,
    output,
    previous_response_id: null,
    store: false,
    truncation: 'disabled',
    usage: null,
    ...extra,
  };
}

/** A response.failed's `error`: the gateway's envelope fields, `code` never null (the openai client reads it). */
export function failedError(body: ErrorBody): Record<string, unknown> {
  return { ...body, code: body.code ?? body.gateway_code };
}

/** The terminal status of a chat finish_reason, with incomplete_details when it did not complete. */
export function statusOf(finishReason: unknown): { status: string; incomplete_details: unknown } {
  if (finishReason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** Chat usage in the Responses' names; null without one. */
export function usageOf(usage: unknown): Record<string, unknown> | null {
  if (!isObject(usage)) return null;
  const count = (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0);
  const prompt = isObject(usage['prompt_tokens_details']) ? usage['prompt_tokens_details'] : {};
  const completion = isObject(usage['completion_tokens_details']) ? usage['completion_tokens_details'] : {};
  const input = count(usage['prompt_tokens']);
  const output = count(usage['completion_tokens']);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: count(prompt['cached_tokens']) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: count(completion['reasoning_tokens']) },
    total_tokens: typeof usage['total_tokens'] === 'number' ? count(usage['total_tokens']) : input + output,
  };
}

export function messageItem(id: string, text: string, status: string): Record<string, unknown> {
  return { type: 'message', id, status, role: 'assistant', content: text === '' && status === 'in_progress' ? [] : [outputText(text)] };
}

export function outputText(text: string): Record<string, unknown> {
  // The AI SDK's schema requires annotations on every output_text part; the openai reader reads logprobs.
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function functionCallItem(id: string, callId: string, name: string, args: string, status: string): Record<string, unknown> {
  return { type: 'function_call', id, call_id: callId, name, arguments: args, status };
}

/** A reasoning item: its text as the summary, and (when asked) the thinking blocks a later request replays. */
export function reasoningItem(id: string, text: string, blocks: readonly string[], includeEncrypted: boolean): Record<string, unknown> {
  const item: Record<string, unknown> = { type: 'reasoning', id, summary: text === '' ? [] : [{ type: 'summary_text', text }] };
  // One item carries one replayable block: a turn with several thinking blocks gives several items.
  if (includeEncrypted && blocks.length > 0) item['encrypted_content'] = encryptedContentOf(blocks[0]!);
  return item;
}

/** A non-streamed chat.completion as the Responses' response object; undefined when it has no choice. */
export function responseOfCompletion(head: ResponseHead, completion: unknown): Record<string, unknown> | undefined {
  if (!isObject(completion) || !Array.isArray(completion['choices']) || !isObject(completion['choices'][0])) return undefined;
  const choice = completion['choices'][0];
  const message = isObject(choice['message']) ? choice['message'] : {};
  const output: unknown[] = [];
  const reasoning = typeof message['reasoning_content'] === 'string' ? message['reasoning_content'] : '';
  const blocks = Array.isArray(message['thinking_blocks']) ? message['thinking_blocks'].map((block) => JSON.stringify(block)) : [];
  if (blocks.length > 0) {
    blocks.forEach((block, i) => output.push(reasoningItem(itemId('rs'), i === 0 ? reasoning : '', [block], head.includeEncrypted)));
  } else if (reasoning !== '') {
    output.push(reasoningItem(itemId('rs'), reasoning, [], false));
  }
  const content = typeof message['content'] === 'string' ? message['content'] : '';
  if (content !== '') output.push(messageItem(itemId('msg'), content, 'completed'));
  if (typeof message['refusal'] === 'string' && message['refusal'] !== '') {
    output.push({ type: 'message', id: itemId('msg'), status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: message['refusal'] }] });
  }
  if (Array.isArray(message['tool_calls'])) {
    for (const call of message['tool_calls']) {
      const fn = isObject(call) && isObject(call['function']) ? call['function'] : {};
      const args = typeof fn['arguments'] === 'string' ? fn['arguments'] : '{}';
      output.push(functionCallItem(itemId('fc'), isObject(call) && typeof call['id'] === 'string' ? call['id'] : itemId('call'), String(fn['name'] ?? ''), args, 'completed'));
    }
  }
  const { status, incomplete_details } = statusOf(choice['finish_reason']);
  return responseObject(head, status, output, { incomplete_details, usage: usageOf(completion['usage']) });
}
