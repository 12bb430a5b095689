import { contentBlocks, contentOf, textBlock } from './content.js';
import { cacheControlOf, invalid, jsonObject, shown, unsupported, type JsonNode } from './json-node.js';

const KNOWN_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** The caller's conversation in Anthropic's shape: system text blocks, and the turns. */
export interface Conversation {
  /** Text blocks of the system and developer messages, in order. */
  readonly system: string[];
  readonly turns: string[];
}

/**
 * system/developer → top-level system blocks; user → user turn; assistant → thinking blocks, text, tool_use;
 * each run of consecutive tool messages → one user turn of tool_result blocks.
 */
export function conversationOf(messages: JsonNode): Conversation {
  const system: string[] = [];
  const turns: string[] = [];
  let toolResults: string[] = [];
  const flushToolResults = () => {
    if (toolResults.length > 0) turns.push(turn('user', `[${toolResults.join(',')}]`));
    toolResults = [];
  };
  for (const message of messages.items()) {
    const role = message.field('role')?.value;
    // A participant's name steers the answer and Anthropic has no place for it: refused, never dropped
    // (after the role, so a role without an Anthropic form is what a legacy function message is told).
    if (KNOWN_ROLES.has(String(role)) && message.given('name') !== undefined) {
      throw unsupported(`${message.path}.name`, `'${message.path}.name' has no Anthropic form: put the name in the message's text instead.`);
    }
    if (role === 'tool') {
      toolResults.push(toolResultBlock(message));
      continue;
    }
    flushToolResults();
    if (role === 'system' || role === 'developer') system.push(...systemBlocks(message));
    else if (role === 'user') turns.push(turn('user', userContent(message)));
    else if (role === 'assistant') turns.push(turn('assistant', assistantContent(message)));
    else throw unsupported(`${message.path}.role`, `'${message.path}.role' ${shown(role)} has no Anthropic form: use system, developer, user, assistant or tool.`);
  }
  flushToolResults();
  return { system, turns };
}

function turn(role: 'user' | 'assistant', content: string): string {
  return jsonObject([['role', JSON.stringify(role)], ['content', content]]);
}

function systemBlocks(message: JsonNode): string[] {
  const content = message.given('content');
  if (content === undefined) return [];
  if (content.isString) {
    // Anthropic refuses empty text blocks; an empty instruction says nothing.
    if (content.value === '') return [];
    return [jsonObject([['type', '"text"'], ['text', content.raw], ...cacheControlOf(message)])];
  }
  return contentBlocks(content, false);
}

function userContent(message: JsonNode): string {
  const content = message.given('content');
  if (content === undefined) throw invalid(`${message.path}.content`, `Missing '${message.path}.content': a user message needs content.`);
  return contentOf(message, content, true);
}

/** Thinking blocks first and verbatim (their signatures must come back intact), then the text, then the tool calls. */
function assistantContent(message: JsonNode): string {
  const thinking = message.given('thinking_blocks');
  const toolCalls = message.given('tool_calls');
  const content = message.given('content');
  const functionCall = message.given('function_call');
  if (functionCall) throw unsupported(functionCall.path, `'${functionCall.path}' (the deprecated function call form) has no Anthropic form: send tool_calls.`);
  if (thinking && !Array.isArray(thinking.value)) throw invalid(thinking.path, `Invalid '${thinking.path}': expected an array of thinking blocks.`);
  if (toolCalls && !Array.isArray(toolCalls.value)) throw invalid(toolCalls.path, `Invalid '${toolCalls.path}': expected an array.`);
  const thinkingItems = thinking?.items() ?? [];
  const callItems = toolCalls?.items() ?? [];
  // A plain text turn goes as the caller's string, byte for byte.
  if (thinkingItems.length === 0 && callItems.length === 0 && content?.isString) return contentOf(message, content, false);
  const blocks: string[] = thinkingItems.map((block) => {
    if (!block.isObject) throw invalid(block.path, `Invalid '${block.path}': expected a thinking block object.`);
    return block.raw;
  });
  if (content?.isString) {
    if (content.value !== '') blocks.push(jsonObject([['type', '"text"'], ['text', content.raw], ...cacheControlOf(message)]));
  } else if (content) {
    for (const part of content.items()) {
      if (part.field('type')?.value !== 'text') {
        throw unsupported(part.path, `Content part type ${shown(part.field('type')?.value)} at '${part.path}' has no Anthropic form in an assistant message: send text parts.`);
      }
      blocks.push(textBlock(part));
    }
  }
  for (const call of callItems) blocks.push(toolUseBlock(call));
  return blocks.length > 0 ? `[${blocks.join(',')}]` : '""';
}

/** `{id, type: "function", function: {name, arguments}}` → `{type: "tool_use", id, name, input}`, the input being the arguments' own JSON text. */
function toolUseBlock(call: JsonNode): string {
  const type = call.field('type')?.value;
  if (type !== undefined && type !== 'function') throw unsupported(call.path, `Tool call type ${shown(type)} at '${call.path}' has no Anthropic form: only function calls do.`);
  const id = call.field('id');
  if (!id?.isString) throw invalid(`${call.path}.id`, `Invalid '${call.path}.id': expected a string.`);
  const fn = call.field('function');
  const name = fn?.field('name');
  if (!name?.isString) throw invalid(`${call.path}.function.name`, `Invalid '${call.path}.function.name': expected a string.`);
  const args = fn!.given('arguments');
  if (args !== undefined && !args.isString) throw invalid(args.path, `Invalid '${args.path}': expected a string of JSON.`);
  return jsonObject([['type', '"tool_use"'], ['id', id.raw], ['name', name.raw], ['input', argumentsInput(args, `${call.path}.function.arguments`)]]);
}

/** The arguments' JSON text itself (numbers and key order as the model or caller wrote them), when it is an object. */
function argumentsInput(args: JsonNode | undefined, param: string): string {
  const text = (args?.value as string | undefined) ?? '';
  if (text.trim() === '') return '{}';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid(param, `Invalid '${param}': not JSON. Tool call arguments must be a JSON object.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalid(param, `Invalid '${param}': tool call arguments must be a JSON object.`);
  }
  return text;
}

/** A tool message → `{type: "tool_result", tool_use_id, content}`. */
function toolResultBlock(message: JsonNode): string {
  const id = message.field('tool_call_id');
  if (!id?.isString) throw invalid(`${message.path}.tool_call_id`, `Missing '${message.path}.tool_call_id': a tool message answers one tool call by its id.`);
  const content = message.given('content');
  const entries: [string, string][] = [['type', '"tool_result"'], ['tool_use_id', id.raw]];
  if (content !== undefined) entries.push(['content', content.isString ? content.raw : `[${contentBlocks(content, true).join(',')}]`]);
  return jsonObject([...entries, ...cacheControlOf(message)]);
}
