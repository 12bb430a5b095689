import type { OutgoingCall } from '../../dialect.js';
import { invalid, jsonObject, rootNode, shown, unsupported, type JsonNode } from '../../anthropic/request/json-node.js';
import { MAX_CANDIDATES } from '../parts.js';
import { contentsOf } from './contents.js';
import { thinkingConfigOf } from './thinking.js';
import { functionDeclarationsOf, toolConfigOf } from './tools.js';

/** OpenAI numbers with a generationConfig name of the same meaning, sent as the caller wrote them. */
const NUMBERS: readonly (readonly [string, string])[] = [
  ['temperature', 'temperature'],
  ['top_p', 'topP'],
  ['seed', 'seed'],
  ['presence_penalty', 'presencePenalty'],
  ['frequency_penalty', 'frequencyPenalty'],
];

/**
 * Fields read below, or that ask nothing of the provider: `stream` is the path, `stream_options` needs nothing
 * (Gemini always reports usage), `user` only labels the caller for abuse tracking and changes no answer.
 */
const HANDLED = new Set([
  'model', 'messages', 'stream', 'stream_options', 'user', 'max_tokens', 'max_completion_tokens', 'stop', 'n',
  'response_format', 'reasoning_effort', 'tools', 'tool_choice', 'parallel_tool_calls', ...NUMBERS.map(([name]) => name),
]);

/** OpenAI fields that ask for nothing at their default value, accepted then; any other value is refused. */
const DEFAULTS: Readonly<Record<string, (value: unknown) => boolean>> = {
  logprobs: (value) => value === false,
  top_logprobs: (value) => value === 0,
  logit_bias: (value) => value !== null && typeof value === 'object' && Object.keys(value).length === 0,
};

/**
 * The generateContent body for the caller's OpenAI chat request. Throws the gateway's 400 naming the field
 * when a field has no Gemini form (`unsupported_parameter`) or its value cannot be translated.
 */
export function buildGeminiRequest(call: OutgoingCall): string {
  const root = rootNode(call.text, call.body);
  for (const [key, node] of root.entries()) {
    if (HANDLED.has(key) || node.value === null) continue;
    if (DEFAULTS[key]?.(node.value)) continue;
    throw unsupported(key, `'${key}' ${shown(node.value)} has no Gemini form for this model: leave it out.`);
  }
  const conversation = contentsOf(root.field('messages')!, call.reasoning === 'levels');
  const out: [string, string][] = [['contents', `[${conversation.contents.join(',')}]`]];
  if (conversation.system.length > 0) out.push(['systemInstruction', `{"parts":[${conversation.system.join(',')}]}`]);
  const tools = root.given('tools');
  const declarations = tools ? functionDeclarationsOf(tools) : undefined;
  if (declarations) out.push(['tools', declarations]);
  const toolConfig = toolConfigOf(root.given('tool_choice'));
  if (toolConfig) out.push(['toolConfig', toolConfig]);
  const parallel = root.given('parallel_tool_calls');
  if (parallel && parallel.value !== true) throw unsupported('parallel_tool_calls', `'parallel_tool_calls' ${shown(parallel.value)} has no Gemini form: Gemini may always call several functions at once.`);
  const generation = generationConfig(root, call);
  if (generation.length > 0) out.push(['generationConfig', jsonObject(generation)]);
  return jsonObject(out);
}

function generationConfig(root: JsonNode, call: OutgoingCall): [string, string][] {
  const config: [string, string][] = [];
  const stop = root.given('stop');
  if (stop) {
    if (stop.isString) config.push(['stopSequences', `[${stop.raw}]`]);
    else if (Array.isArray(stop.value) && stop.items().every((item) => item.isString)) config.push(['stopSequences', stop.raw]);
    else throw invalid('stop', `Invalid 'stop': expected a string or an array of strings.`);
  }
  for (const [from, to] of NUMBERS) {
    const node = root.given(from);
    if (!node) continue;
    if (typeof node.value !== 'number') throw invalid(from, `Invalid '${from}': expected a number.`);
    config.push([to, node.raw]);
  }
  const candidates = candidateCountOf(root.given('n'));
  if (candidates !== undefined) config.push(['candidateCount', String(candidates)]);
  const maxTokens = maxOutputTokensOf(root, call.maxOutputTokens);
  if (maxTokens !== undefined) config.push(['maxOutputTokens', String(maxTokens)]);
  config.push(...responseFormatOf(root.given('response_format')));
  const thinking = thinkingConfigOf(root.given('reasoning_effort')?.value, call);
  if (thinking) config.push(['thinkingConfig', thinking]);
  return config;
}

/** `n` as candidateCount: one choice per candidate. Absent for 1 (Gemini's default), so such a body is as before. */
function candidateCountOf(n: JsonNode | undefined): number | undefined {
  if (!n) return undefined;
  if (typeof n.value !== 'number' || !Number.isSafeInteger(n.value) || n.value < 1) throw invalid('n', `Invalid 'n': expected a positive integer.`);
  if (n.value > MAX_CANDIDATES) throw unsupported('n', `'n' ${shown(n.value)} is more than Gemini generates: at most ${MAX_CANDIDATES} choices.`);
  return n.value === 1 ? undefined : n.value;
}

/** max_completion_tokens, else max_tokens, never above the model's max_output_tokens; else that maximum. */
function maxOutputTokensOf(root: JsonNode, modelMax: number | null): number | undefined {
  const node = root.given('max_completion_tokens') ?? root.given('max_tokens');
  if (!node) return modelMax ?? undefined;
  if (typeof node.value !== 'number' || !Number.isSafeInteger(node.value) || node.value < 1) {
    throw invalid(node.path, `Invalid '${node.path}': expected a positive integer.`);
  }
  if (modelMax !== null && node.value > modelMax) {
    throw invalid(node.path, `Invalid '${node.path}': this model writes at most ${modelMax} tokens, not ${node.value}.`);
  }
  return node.value;
}

/** json_schema → JSON out with the caller's schema unchanged (responseJsonSchema takes full JSON Schema); json_object → JSON out. */
function responseFormatOf(format: JsonNode | undefined): [string, string][] {
  const type = format?.field('type')?.value;
  if (!format || type === 'text') return [];
  if (type === 'json_object') return [['responseMimeType', '"application/json"']];
  if (type === 'json_schema') {
    const schema = format.field('json_schema')?.given('schema');
    if (!schema?.isObject) throw invalid('response_format.json_schema.schema', `Missing 'response_format.json_schema.schema': Gemini needs the JSON Schema of the answer.`);
    return [['responseMimeType', '"application/json"'], ['responseJsonSchema', schema.raw]];
  }
  throw unsupported('response_format.type', `response_format of type ${shown(type)} has no Gemini form: use text, json_object or json_schema.`);
}
