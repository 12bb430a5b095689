import type { ChatCompletionRequest } from '../../../generated/types/chat-completion-request.js';
import { scanTopLevel } from '../../../wire/json-top-level.js';
import { editTopLevel } from '../../../wire/json-top-level-edit.js';
import { invalid, jsonObject, rootNode, type JsonNode } from './json-node.js';
import { conversationOf } from './messages.js';
import { reasoningFields, type ReasoningKind } from './reasoning.js';
import { refuseGatedFields } from './gated-fields.js';
import { refuseUnanswerable, responseFormatOf } from './refusals.js';
import { toolChoiceOf, toolsOf } from './tools.js';

export interface AnthropicModel {
  /** The model id sent to Anthropic. */
  readonly upstreamModel: string;
  /** routes.yaml max_output_tokens: the max_tokens sent when the caller gives none. */
  readonly maxOutputTokens: number;
  readonly reasoning: ReasoningKind;
  /** routes.yaml allow_fields: the gated native fields this model lets a caller send. Absent: none. */
  readonly allowedFields?: readonly string[];
}

/** OpenAI fields this translator reads; every other top-level field goes to Anthropic with its bytes as sent. */
const TRANSLATED = new Set([
  'model',
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'stop',
  'temperature',
  'top_p',
  'user',
  'response_format',
  'stream',
  'stream_options',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'reasoning_effort',
  'n',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'presence_penalty',
  'frequency_penalty',
]);

/** The OpenAI field each member of a merged Anthropic object comes from. */
const MEMBER_SOURCES: Readonly<Record<string, string>> = { user_id: 'user', effort: 'reasoning_effort', format: 'response_format' };

/** One field of the Anthropic body: encoded JSON, or members of an object a caller's own field of that name may also fill. */
interface Produced {
  readonly json?: string;
  readonly members?: [string, string][];
  /** The OpenAI field(s) it comes from, for the message when the caller also set it directly. */
  readonly from: string;
}

/**
 * The Messages API body for the caller's OpenAI chat-completions request. Throws the gateway's 400
 * (`unsupported_parameter` or `invalid_request`, naming `param`) when a field cannot be honoured:
 * nothing that would change the answer is silently dropped.
 */
export function buildAnthropicRequest(text: string, body: ChatCompletionRequest, model: AnthropicModel): string {
  const root = rootNode(text, body);
  refuseUnanswerable(root);
  refuseGatedFields(root, model);
  const maxTokens = maxTokensOf(root, model);
  const produced = new Map<string, Produced>();
  const put = (key: string, field: Produced | undefined) => {
    if (field) produced.set(key, field);
  };
  const conversation = conversationOf(root.field('messages')!);
  put('model', { json: JSON.stringify(model.upstreamModel), from: 'model' });
  put('max_tokens', { json: String(maxTokens), from: 'max_tokens' });
  if (conversation.system.length > 0) put('system', { json: `[${conversation.system.join(',')}]`, from: 'system and developer messages' });
  put('messages', { json: `[${conversation.turns.join(',')}]`, from: 'messages' });
  const tools = root.given('tools');
  const toolList = tools ? toolsOf(tools) : [];
  if (toolList.length > 0) put('tools', { json: `[${toolList.join(',')}]`, from: 'tools' });
  const toolChoice = toolChoiceOf(root.given('tool_choice'), root.given('parallel_tool_calls'), toolList.length > 0);
  if (toolChoice) put('tool_choice', { json: toolChoice, from: 'tool_choice and parallel_tool_calls' });
  put('stop_sequences', stopSequencesOf(root.given('stop')));
  put('temperature', numberAsSent(root.given('temperature')));
  put('top_p', numberAsSent(root.given('top_p')));
  const user = root.given('user');
  if (user && !user.isString) throw invalid(user.path, `Invalid '${user.path}': expected a string.`);
  if (user) put('metadata', { members: [['user_id', user.raw]], from: 'user' });
  const reasoning = reasoningFields(root.given('reasoning_effort')?.value, model.reasoning, maxTokens);
  if (reasoning.thinking) put('thinking', { json: reasoning.thinking, from: 'reasoning_effort' });
  const outputConfig: [string, string][] = [];
  if (reasoning.effort) outputConfig.push(['effort', reasoning.effort]);
  const format = responseFormatOf(root.given('response_format'));
  if (format) outputConfig.push(['format', format]);
  if (outputConfig.length > 0) put('output_config', { members: outputConfig, from: outputConfig.map(([member]) => MEMBER_SOURCES[member]).join(' and ') });
  const stream = root.given('stream');
  if (stream) put('stream', { json: stream.raw, from: 'stream' });
  return assemble(root, produced);
}

/** The produced fields, each merged with a caller's own field of the same name, then the caller's other fields as sent. */
function assemble(root: JsonNode, produced: ReadonlyMap<string, Produced>): string {
  const entries = root.entries();
  const out: [string, string][] = [];
  for (const [key, field] of produced) {
    const own = entries.get(key);
    out.push([key, own && !TRANSLATED.has(key) && own.value !== null ? merged(own, field) : encode(field)]);
  }
  for (const [key, node] of entries) {
    if (!TRANSLATED.has(key) && !produced.has(key)) out.push([key, node.raw]);
  }
  return jsonObject(out);
}

function encode(field: Produced): string {
  return field.json ?? jsonObject(field.members ?? []);
}

/**
 * The caller's own object (an Anthropic field such as `metadata` or `output_config`) with the translated
 * members added; one set both ways is refused rather than one silently winning.
 */
function merged(own: JsonNode, field: Produced): string {
  const conflict = (param: string) => invalid(param, `'${param}' is set both directly and through ${field.from}: send one of them.`);
  if (!field.members || !own.isObject) throw conflict(own.path);
  const scan = scanTopLevel(own.raw);
  if (!scan) throw new Error(`"${own.path}" does not scan as an object`);
  for (const [member] of field.members) {
    if (own.field(member) !== undefined) throw invalid(`${own.path}.${member}`, `'${own.path}.${member}' is set both directly and through ${MEMBER_SOURCES[member] ?? field.from}: send one of them.`);
  }
  return editTopLevel(own.raw, scan, new Map(field.members));
}

/** max_completion_tokens, else max_tokens, else the model's max_output_tokens: never a guessed small default. */
function maxTokensOf(root: JsonNode, model: AnthropicModel): number {
  const node = root.given('max_completion_tokens') ?? root.given('max_tokens');
  if (!node) return model.maxOutputTokens;
  if (typeof node.value !== 'number' || !Number.isSafeInteger(node.value) || node.value < 1) {
    throw invalid(node.path, `Invalid '${node.path}': expected a positive integer.`);
  }
  if (node.value > model.maxOutputTokens) {
    throw invalid(node.path, `'${node.path}' ${node.value} is more than this model can write (${model.maxOutputTokens}, its max_output_tokens): send at most that, or leave it out.`);
  }
  return node.value;
}

/** `stop`: a string or an array of strings → `stop_sequences`, the strings' bytes as sent. */
function stopSequencesOf(stop: JsonNode | undefined): Produced | undefined {
  if (!stop) return undefined;
  if (stop.isString) return { json: `[${stop.raw}]`, from: 'stop' };
  const items = stop.items();
  if (!Array.isArray(stop.value) || items.some((item) => !item.isString)) {
    throw invalid(stop.path, `Invalid '${stop.path}': expected a string or an array of strings.`);
  }
  return items.length > 0 ? { json: stop.raw, from: 'stop' } : undefined;
}

/** temperature, top_p: the number as the caller wrote it. */
function numberAsSent(node: JsonNode | undefined): Produced | undefined {
  if (!node) return undefined;
  if (typeof node.value !== 'number') throw invalid(node.path, `Invalid '${node.path}': expected a number.`);
  return { json: node.raw, from: node.path };
}
