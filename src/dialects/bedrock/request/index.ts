import type { OutgoingCall } from '../../dialect.js';
import { invalid, jsonObject, rootNode, shown, unsupported, type JsonNode } from '../../anthropic/request/json-node.js';
import { reasoningFields, type ReasoningKind } from '../../anthropic/request/reasoning.js';
import { conversationOf } from './messages.js';
import { toolConfigOf } from './tools.js';

/**
 * Fields read below, or that ask nothing of the provider: `stream` is the path, `stream_options` needs nothing
 * (Bedrock always reports usage), `user` only labels the caller for abuse tracking and changes no answer.
 */
const HANDLED = new Set([
  'model', 'messages', 'stream', 'stream_options', 'user', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p',
  'stop', 'tools', 'tool_choice', 'reasoning_effort', 'thinking',
]);

/** OpenAI fields Converse cannot express, accepted (and not sent) at their default value only. */
const DEFAULTS: Readonly<Record<string, (value: unknown) => boolean>> = {
  n: (value) => value === 1,
  logprobs: (value) => value === false,
  top_logprobs: (value) => value === 0,
  logit_bias: (value) => value !== null && typeof value === 'object' && Object.keys(value).length === 0,
  presence_penalty: (value) => value === 0,
  frequency_penalty: (value) => value === 0,
  parallel_tool_calls: (value) => value === true,
  response_format: (value) => value !== null && typeof value === 'object' && (value as Record<string, unknown>)['type'] === 'text',
};

/**
 * The Converse body for the caller's OpenAI chat request: only ConverseRequest members (the model is in the
 * path). Throws the gateway's 400 naming the field when a field has no Converse form (`unsupported_parameter`)
 * or its value cannot be translated; nothing is sent then.
 */
export function buildBedrockRequest(call: OutgoingCall): string {
  const root = rootNode(call.text, call.body);
  for (const [key, node] of root.entries()) {
    if (HANDLED.has(key) || node.value === null) continue;
    if (DEFAULTS[key]?.(node.value)) continue;
    throw unsupported(key, `'${key}' ${shown(node.value)} has no Bedrock Converse form: leave it out.`);
  }
  const conversation = conversationOf(root.field('messages')!);
  const out: [string, string][] = [['messages', `[${conversation.messages.join(',')}]`]];
  if (conversation.system.length > 0) out.push(['system', `[${conversation.system.join(',')}]`]);
  const toolConfig = toolConfigOf(root.given('tools'), root.given('tool_choice'), conversation.toolBlocks);
  const maxTokens = maxTokensOf(root, call.maxOutputTokens);
  const thinking = thinkingOf(root, call, maxTokens);
  const inference = inferenceConfig(root, maxTokens);
  if (inference.length > 0) out.push(['inferenceConfig', jsonObject(inference)]);
  if (toolConfig) out.push(['toolConfig', toolConfig]);
  if (thinking) out.push(['additionalModelRequestFields', `{"thinking":${thinking}}`]);
  return jsonObject(out);
}

function inferenceConfig(root: JsonNode, maxTokens: number | undefined): [string, string][] {
  const config: [string, string][] = [];
  if (maxTokens !== undefined) config.push(['maxTokens', String(maxTokens)]);
  for (const [from, to] of [['temperature', 'temperature'], ['top_p', 'topP']] as const) {
    const node = root.given(from);
    if (!node) continue;
    if (typeof node.value !== 'number') throw invalid(from, `Invalid '${from}': expected a number.`);
    config.push([to, node.raw]);
  }
  const stop = root.given('stop');
  if (stop) {
    if (stop.isString) config.push(['stopSequences', `[${stop.raw}]`]);
    else if (Array.isArray(stop.value) && stop.items().every((item) => item.isString)) {
      if (stop.items().length > 0) config.push(['stopSequences', stop.raw]);
    } else throw invalid('stop', `Invalid 'stop': expected a string or an array of strings.`);
  }
  return config;
}

/** max_completion_tokens, else max_tokens, never above the model's max_output_tokens; else that maximum (undefined when routes.yaml gives none). */
function maxTokensOf(root: JsonNode, modelMax: number | null): number | undefined {
  const node = root.given('max_completion_tokens') ?? root.given('max_tokens');
  if (!node) return modelMax ?? undefined;
  if (typeof node.value !== 'number' || !Number.isSafeInteger(node.value) || node.value < 1) {
    throw invalid(node.path, `Invalid '${node.path}': expected a positive integer.`);
  }
  if (modelMax !== null && node.value > modelMax) {
    throw invalid(node.path, `'${node.path}' ${node.value} is more than this model can write (${modelMax}, its max_output_tokens): send at most that, or leave it out.`);
  }
  return node.value;
}

/**
 * Claude's extended thinking as additionalModelRequestFields.thinking (JSON text): `reasoning_effort` mapped as
 * the anthropic dialect maps it, or the caller's own Anthropic `thinking` object as sent, on a `budget` model.
 */
function thinkingOf(root: JsonNode, call: OutgoingCall, maxTokens: number | undefined): string | undefined {
  const own = root.given('thinking');
  const effort = root.given('reasoning_effort');
  const kind: ReasoningKind = call.reasoning === 'budget' ? 'budget' : 'none';
  if (own) {
    if (kind === 'none') throw unsupported('thinking', `This model does not think: leave 'thinking' out.`);
    if (!own.isObject) throw invalid('thinking', `Invalid 'thinking': expected an object such as {"type":"enabled","budget_tokens":2048}.`);
    if (effort && effort.value !== 'none') throw invalid('thinking', `'thinking' is set both directly and through reasoning_effort: send one of them.`);
    return own.raw;
  }
  if (kind === 'budget' && maxTokens === undefined && effort && effort.value !== 'none') {
    throw invalid('reasoning_effort', `Invalid 'reasoning_effort': thinking needs max_tokens, and this model has no max_output_tokens in routes.yaml.`);
  }
  return reasoningFields(effort?.value, kind, maxTokens ?? 0).thinking;
}
