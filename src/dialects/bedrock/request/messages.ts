import { invalid, jsonObject, shown, unsupported, type JsonNode } from '../../anthropic/request/json-node.js';
import { isObject, parseJson } from '../../json-values.js';

const DATA_URL = /^data:image\/(png|jpeg|gif|webp);base64,(.*)$/s;

/** The caller's conversation in Converse's shape. */
export interface Conversation {
  /** `{text}` blocks of the system and developer messages, in order. */
  readonly system: string[];
  /** Messages whose roles alternate. */
  readonly messages: string[];
  /** Whether a toolUse or toolResult block is in it (Bedrock then needs toolConfig). */
  readonly toolBlocks: boolean;
}

interface Turn {
  readonly role: 'user' | 'assistant';
  readonly blocks: string[];
}

/**
 * system/developer → `system` text blocks; user → user text and image blocks; assistant → its thinking blocks,
 * text, then toolUse blocks; tool → toolResult blocks in a user message. Consecutive turns of one role are one
 * message (Bedrock requires roles to alternate), and empty texts are left out (Bedrock refuses blank text).
 */
export function conversationOf(messages: JsonNode): Conversation {
  const system: string[] = [];
  const turns: Turn[] = [];
  let toolBlocks = false;
  const add = (role: Turn['role'], blocks: string[]) => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  };
  for (const message of messages.items()) {
    const role = message.field('role')?.value;
    if (message.given('name') !== undefined && typeof role === 'string' && role !== 'function') {
      throw unsupported(`${message.path}.name`, `'${message.path}.name' has no Bedrock form: put the name in the message's text instead.`);
    }
    if (role === 'system' || role === 'developer') system.push(...textBlocks(message, false));
    else if (role === 'user') add('user', textBlocks(message, true));
    else if (role === 'assistant') {
      const blocks = assistantBlocks(message);
      toolBlocks ||= blocks.some((block) => block.startsWith('{"toolUse"'));
      add('assistant', blocks);
    } else if (role === 'tool') {
      toolBlocks = true;
      add('user', [toolResult(message)]);
    } else throw unsupported(`${message.path}.role`, `'${message.path}.role' ${shown(role)} has no Bedrock form: use system, developer, user, assistant or tool.`);
  }
  return { system, messages: turns.map((turn) => `{"role":"${turn.role}","content":[${turn.blocks.join(',')}]}`), toolBlocks };
}

/** A message's text blocks (and, for user messages, image blocks); empty texts left out. */
function textBlocks(message: JsonNode, allowImages: boolean): string[] {
  const body = message.given('content');
  if (body === undefined) return [];
  if (body.isString) return body.value === '' ? [] : [`{"text":${body.raw}}`];
  if (!Array.isArray(body.value)) throw invalid(body.path, `Invalid '${body.path}': expected a string or an array of content parts.`);
  return body.items().flatMap((part) => {
    const type = part.field('type')?.value;
    if (type === 'text') {
      const text = part.field('text');
      if (!text?.isString) throw invalid(`${part.path}.text`, `Invalid '${part.path}.text': expected a string.`);
      return text.value === '' ? [] : [`{"text":${text.raw}}`];
    }
    if (type === 'image_url' && allowImages) return [imageBlock(part)];
    throw unsupported(part.path, `Content part type ${shown(type)} at '${part.path}' has no Bedrock form here: send text${allowImages ? ' or image_url' : ''} parts.`);
  });
}

/** A data: URL image as an image block. The gateway never fetches: any other URL is refused. `detail` has no Converse form: dropped. */
function imageBlock(part: JsonNode): string {
  const image = part.field('image_url');
  const param = image?.isString ? `${part.path}.image_url` : `${part.path}.image_url.url`;
  const url = (image?.isString ? image : image?.field('url'))?.value;
  if (typeof url !== 'string') throw invalid(param, `Invalid '${param}': expected a string URL.`);
  const data = DATA_URL.exec(url);
  if (!data) {
    throw unsupported(param, `Invalid '${param}': the gateway sends Bedrock images only as data:image/{png,jpeg,gif,webp};base64,… URLs; it never fetches a URL.`);
  }
  return `{"image":{"format":"${data[1]!}","source":{"bytes":${JSON.stringify(data[2]!)}}}}`;
}

/** Thinking blocks first (their signatures byte for byte), then the text, then each tool call as toolUse. */
function assistantBlocks(message: JsonNode): string[] {
  const functionCall = message.given('function_call');
  if (functionCall) throw unsupported(functionCall.path, `'${functionCall.path}' (the deprecated function call form) has no Bedrock form: send tool_calls.`);
  const thinking = message.given('thinking_blocks');
  if (thinking && !Array.isArray(thinking.value)) throw invalid(thinking.path, `Invalid '${thinking.path}': expected an array of thinking blocks.`);
  const blocks = (thinking?.items() ?? []).map(reasoningBlock);
  blocks.push(...textBlocks(message, false));
  const calls = message.given('tool_calls');
  if (calls && !Array.isArray(calls.value)) throw invalid(calls.path, `Invalid '${calls.path}': expected an array.`);
  for (const call of calls?.items() ?? []) blocks.push(toolUse(call));
  return blocks;
}

/** `{type: thinking, thinking, signature}` → reasoningText; `{type: redacted_thinking, data}` → redactedContent. */
function reasoningBlock(block: JsonNode): string {
  const type = block.field('type')?.value;
  if (type === 'thinking') {
    const text = block.field('thinking');
    const signature = block.given('signature');
    if (!text?.isString) throw invalid(`${block.path}.thinking`, `Invalid '${block.path}.thinking': expected a string.`);
    if (signature && !signature.isString) throw invalid(signature.path, `Invalid '${signature.path}': expected a string.`);
    const entries: [string, string][] = [['text', text.raw]];
    if (signature) entries.push(['signature', signature.raw]);
    return `{"reasoningContent":{"reasoningText":${jsonObject(entries)}}}`;
  }
  if (type === 'redacted_thinking') {
    const data = block.field('data');
    if (!data?.isString) throw invalid(`${block.path}.data`, `Invalid '${block.path}.data': expected a string.`);
    return `{"reasoningContent":{"redactedContent":${data.raw}}}`;
  }
  throw invalid(`${block.path}.type`, `Invalid '${block.path}.type': expected thinking or redacted_thinking.`);
}

/** `{id, function: {name, arguments}}` → toolUse with the arguments' own JSON text as its input (an object). */
function toolUse(call: JsonNode): string {
  const type = call.field('type')?.value;
  if (type !== undefined && type !== 'function') throw unsupported(call.path, `Tool call type ${shown(type)} at '${call.path}' has no Bedrock form: only function calls do.`);
  const id = call.field('id');
  if (!id?.isString) throw invalid(`${call.path}.id`, `Invalid '${call.path}.id': expected a string.`);
  const name = call.field('function')?.field('name');
  if (!name?.isString) throw invalid(`${call.path}.function.name`, `Invalid '${call.path}.function.name': expected a string.`);
  const args = call.field('function')!.given('arguments');
  const param = `${call.path}.function.arguments`;
  if (args !== undefined && !args.isString) throw invalid(param, `Invalid '${param}': expected a string of JSON.`);
  const text = (args?.value as string | undefined) ?? '';
  if (text.trim() !== '' && !isObject(parseJson(text))) throw invalid(param, `Invalid '${param}': tool call arguments must be a JSON object.`);
  return `{"toolUse":{"toolUseId":${id.raw},"name":${name.raw},"input":${text.trim() === '' ? '{}' : text}}}`;
}

/** A tool message → a toolResult block of its text. */
function toolResult(message: JsonNode): string {
  const id = message.field('tool_call_id');
  if (!id?.isString) throw invalid(`${message.path}.tool_call_id`, `Missing '${message.path}.tool_call_id': a tool message answers one tool call by its id.`);
  return `{"toolResult":{"toolUseId":${id.raw},"content":[${textBlocks(message, false).join(',')}]}}`;
}
