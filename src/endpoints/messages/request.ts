import { CallerPaths, type InnerRenames } from '../../wire/caller-paths.js';
import { copyPresent, invalidField, isObject, refuseUnknown, shown, stringField, unsupportedField } from '../inbound-fields.js';

const ENDPOINT = 'POST /v1/messages';
const KNOWN = new Set(['model', 'messages', 'system', 'max_tokens', 'metadata', 'stop_sequences', 'stream', 'temperature', 'top_p', 'top_k', 'tools', 'tool_choice', 'thinking', 'service_tier']);

/** A chat tool or tool choice wraps what the Messages request holds flat, under other names. */
const TOOL: InnerRenames = { '.function': '', '.function.parameters': '.input_schema' };
const TOOL_USE: InnerRenames = { '.function': '', '.function.arguments': '.input' };
const TOOL_RESULT: InnerRenames = { '.tool_call_id': '.tool_use_id' };
const IMAGE: InnerRenames = { '.image_url': '.source', '.image_url.url': '.source' };
const WHOLE_CONTENT: InnerRenames = { '.content': '' };

/** The chat fields every translated Messages request names differently. */
function messagesPaths(): CallerPaths {
  const paths = new CallerPaths();
  paths.set('max_completion_tokens', 'max_tokens');
  paths.set('stop', 'stop_sequences');
  paths.set('reasoning_effort', 'thinking.budget_tokens');
  paths.set('user', 'metadata.user_id');
  paths.set('stream_options', 'stream');
  paths.set('parallel_tool_calls', 'tool_choice.disable_parallel_tool_use');
  paths.set('tool_choice', 'tool_choice', { '.function': '' });
  return paths;
}

/** Checks the few fields the gateway itself needs before a native call; Anthropic checks the rest. */
export function readNativeMessages(body: unknown, countTokens: boolean): { model: string; stream: boolean } {
  if (!isObject(body)) throw invalidField('', 'The request body must be a JSON object.');
  const model = stringField(body['model'], 'model');
  if (!countTokens && body['stream'] !== undefined && typeof body['stream'] !== 'boolean') throw invalidField('stream', `Invalid 'stream': expected a boolean.`);
  return { model, stream: !countTokens && body['stream'] === true };
}

/**
 * A Messages request as the internal chat request, for routes whose dialect does not take Messages natively.
 * Thinking blocks from earlier turns have nowhere to go on such a route (their signatures are Anthropic's):
 * dropped. cache_control is a hint: dropped.
 */
export function messagesAsChat(body: Record<string, unknown>): { chat: Record<string, unknown>; paths: CallerPaths } {
  refuseUnknown(body, KNOWN, ENDPOINT, 'docs/messages.md');
  if (body['top_k'] !== undefined && body['top_k'] !== null) throw unsupportedField('top_k', `'top_k' is not supported on this route: its provider has no top_k.`);
  const maxTokens = body['max_tokens'];
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) throw invalidField('max_tokens', `Invalid 'max_tokens': expected a positive integer.`);
  const paths = messagesPaths();
  const chat: Record<string, unknown> = { model: body['model'], messages: conversationOf(body['system'], body['messages'], paths), max_completion_tokens: maxTokens };
  copyPresent(body, chat, ['temperature', 'top_p', 'service_tier']);
  if (body['stop_sequences'] !== undefined && body['stop_sequences'] !== null) chat['stop'] = body['stop_sequences'];
  if (isObject(body['metadata']) && typeof body['metadata']['user_id'] === 'string') chat['user'] = body['metadata']['user_id'];
  if (body['stream'] === true) {
    chat['stream'] = true;
    chat['stream_options'] = { include_usage: true };
  }
  if (body['tools'] !== undefined) chat['tools'] = toolsOf(body['tools'], paths);
  if (body['tool_choice'] !== undefined) Object.assign(chat, toolChoiceOf(body['tool_choice']));
  const effort = effortOf(body['thinking']);
  if (effort) chat['reasoning_effort'] = effort;
  return { chat, paths };
}

/** The chat messages, each chat path recorded as the message or content block it came from. */
function conversationOf(system: unknown, messages: unknown, paths: CallerPaths): Record<string, unknown>[] {
  const chat: Record<string, unknown>[] = [];
  if (system !== undefined && system !== null) {
    paths.set('messages[0]', 'system', WHOLE_CONTENT);
    chat.push({ role: 'system', content: typeof system === 'string' ? system : textsOf(system, 'system') });
  }
  if (!Array.isArray(messages) || messages.length === 0) throw invalidField('messages', `Invalid 'messages': expected a non-empty array.`);
  messages.forEach((message, i) => {
    const path = `messages[${i}]`;
    if (!isObject(message)) throw invalidField(path, `Invalid '${path}': expected an object.`);
    const role = message['role'];
    if (role !== 'user' && role !== 'assistant') throw invalidField(`${path}.role`, `Invalid '${path}.role' ${shown(role)}: expected user or assistant.`);
    const content = message['content'];
    const first = chat.length;
    const origin: Origin = (offset, below, caller, inner) => paths.set(`messages[${first + offset}]${below}`, caller, inner);
    if (typeof content === 'string') {
      origin(0, '', path);
      chat.push({ role, content });
      return;
    }
    if (!Array.isArray(content)) throw invalidField(`${path}.content`, `Invalid '${path}.content': expected a string or an array of content blocks.`);
    if (role === 'assistant') chat.push(assistantOf(content, path, origin));
    else chat.push(...userOf(content, path, origin));
  });
  return chat;
}

/** Records that the chat path `below` the message `offset` messages on came from the caller's path `caller`. */
type Origin = (offset: number, below: string, caller: string, inner?: InnerRenames) => void;

function textsOf(blocks: unknown, path: string): string {
  if (!Array.isArray(blocks)) throw invalidField(path, `Invalid '${path}': expected a string or an array of text blocks.`);
  return blocks
    .map((block, i) => {
      if (!isObject(block) || block['type'] !== 'text') throw unsupportedField(`${path}[${i}]`, `'${path}[${i}]': only text blocks are taken here on this route.`);
      return stringField(block['text'], `${path}[${i}].text`);
    })
    .join('\n\n');
}

function assistantOf(blocks: unknown[], message: string, origin: Origin): Record<string, unknown> {
  let text = '';
  const calls: Record<string, unknown>[] = [];
  origin(0, '', message);
  blocks.forEach((block, i) => {
    const at = `${message}.content[${i}]`;
    if (!isObject(block)) throw invalidField(at, `Invalid '${at}': expected an object.`);
    switch (block['type']) {
      case 'text':
        text += stringField(block['text'], `${at}.text`);
        return;
      case 'tool_use':
        origin(0, `.tool_calls[${calls.length}]`, at, TOOL_USE);
        calls.push({ id: stringField(block['id'], `${at}.id`), type: 'function', function: { name: stringField(block['name'], `${at}.name`), arguments: JSON.stringify(block['input'] ?? {}) } });
        return;
      case 'thinking':
      case 'redacted_thinking':
        return; // signed for Anthropic only: no other provider can take it back
      default:
        throw unsupportedField(`${at}.type`, `'${at}.type' ${shown(block['type'])} is not supported on this route: text, tool_use and thinking are.`);
    }
  });
  return calls.length > 0 ? { role: 'assistant', content: text === '' ? null : text, tool_calls: calls } : { role: 'assistant', content: text };
}

/** Tool results first (as tool messages, answering the assistant's calls), then the rest as one user message. */
function userOf(blocks: unknown[], message: string, origin: Origin): Record<string, unknown>[] {
  const results: Record<string, unknown>[] = [];
  const parts: Record<string, unknown>[] = [];
  /** Where each part came from: blocks before it may have become tool messages. */
  const partOrigins: [string, string, InnerRenames?][] = [];
  blocks.forEach((block, i) => {
    const at = `${message}.content[${i}]`;
    if (!isObject(block)) throw invalidField(at, `Invalid '${at}': expected an object.`);
    switch (block['type']) {
      case 'text':
        if (parts.length !== i) partOrigins.push([`.content[${parts.length}]`, at]);
        parts.push({ type: 'text', text: stringField(block['text'], `${at}.text`) });
        return;
      case 'image':
        partOrigins.push([`.content[${parts.length}]`, at, IMAGE]);
        parts.push({ type: 'image_url', image_url: { url: imageUrlOf(block['source'], `${at}.source`) } });
        return;
      case 'tool_result': {
        const content = block['content'];
        const text = content === undefined ? '' : typeof content === 'string' ? content : textsOf(content, `${at}.content`);
        origin(results.length, '', at, TOOL_RESULT);
        results.push({ role: 'tool', tool_call_id: stringField(block['tool_use_id'], `${at}.tool_use_id`), content: block['is_error'] === true ? `Error: ${text}` : text });
        return;
      }
      default:
        throw unsupportedField(`${at}.type`, `'${at}.type' ${shown(block['type'])} is not supported on this route: text, image and tool_result are.`);
    }
  });
  if (parts.length === 0) return results;
  origin(results.length, '', message);
  for (const [below, caller, inner] of partOrigins) origin(results.length, below, caller, inner);
  return [...results, { role: 'user', content: parts }];
}

function imageUrlOf(source: unknown, path: string): string {
  if (isObject(source) && source['type'] === 'base64') return `data:${stringField(source['media_type'], `${path}.media_type`)};base64,${stringField(source['data'], `${path}.data`)}`;
  if (isObject(source) && source['type'] === 'url') return stringField(source['url'], `${path}.url`);
  throw unsupportedField(path, `'${path}': images are taken as base64 or url sources on this route.`);
}

function toolsOf(tools: unknown, paths: CallerPaths): Record<string, unknown>[] {
  if (!Array.isArray(tools)) throw invalidField('tools', `Invalid 'tools': expected an array.`);
  return tools.map((tool, i) => {
    paths.set(`tools[${i}]`, `tools[${i}]`, TOOL);
    if (!isObject(tool)) throw invalidField(`tools[${i}]`, `Invalid 'tools[${i}]': expected an object.`);
    if (tool['type'] !== undefined && tool['type'] !== null && tool['type'] !== 'custom') {
      throw unsupportedField(`tools[${i}].type`, `'tools[${i}].type' ${shown(tool['type'])} is not supported on this route: server tools run at Anthropic only.`);
    }
    const fn: Record<string, unknown> = { name: stringField(tool['name'], `tools[${i}].name`), parameters: tool['input_schema'] ?? { type: 'object' } };
    if (typeof tool['description'] === 'string') fn['description'] = tool['description'];
    return { type: 'function', function: fn };
  });
}

function toolChoiceOf(choice: unknown): Record<string, unknown> {
  if (!isObject(choice)) throw invalidField('tool_choice', `Invalid 'tool_choice': expected an object.`);
  const parallel = choice['disable_parallel_tool_use'] === true ? { parallel_tool_calls: false } : {};
  switch (choice['type']) {
    case 'auto':
      return { tool_choice: 'auto', ...parallel };
    case 'any':
      return { tool_choice: 'required', ...parallel };
    case 'none':
      return { tool_choice: 'none' };
    case 'tool':
      return { tool_choice: { type: 'function', function: { name: stringField(choice['name'], 'tool_choice.name') } }, ...parallel };
    default:
      throw invalidField('tool_choice.type', `Invalid 'tool_choice.type' ${shown(choice['type'])}: expected auto, any, tool or none.`);
  }
}

/** Anthropic's thinking budget as an effort level other providers take; adaptive or disabled leave the model's default. */
function effortOf(thinking: unknown): string | undefined {
  if (thinking === undefined || thinking === null) return undefined;
  if (!isObject(thinking)) throw invalidField('thinking', `Invalid 'thinking': expected an object.`);
  if (thinking['type'] !== 'enabled') return undefined;
  const budget = thinking['budget_tokens'];
  if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < 1) throw invalidField('thinking.budget_tokens', `Invalid 'thinking.budget_tokens': expected a positive integer.`);
  return budget < 8192 ? 'low' : budget < 16384 ? 'medium' : 'high';
}
