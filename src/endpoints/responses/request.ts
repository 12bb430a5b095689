import { copyPresent, invalidField, isObject, refuseUnknown, shown, stringField, unsupportedField } from '../inbound-fields.js';
import { CallerPaths, type InnerRenames } from '../../wire/caller-paths.js';
import { readReasoningReplay } from './reasoning-replay.js';

/** What the Responses request asks of the answer beyond the chat request. */
export interface ResponsesRequest {
  /** The internal chat request. */
  readonly chat: Record<string, unknown>;
  readonly stream: boolean;
  /** `include: ["reasoning.encrypted_content"]`: reasoning items carry what a later request can replay. */
  readonly includeEncrypted: boolean;
  /** Echoed in the response object as the official clients expect. */
  readonly echo: Record<string, unknown>;
  /** Where each path of `chat` came from in the caller's request. */
  readonly paths: CallerPaths;
}

const ENDPOINT = 'POST /v1/responses';
const KNOWN = new Set([
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'max_output_tokens', 'temperature', 'top_p',
  'text', 'reasoning', 'include', 'stream', 'store', 'metadata', 'user', 'prompt_cache_key', 'service_tier', 'truncation',
  'stream_options', 'safety_identifier', 'previous_response_id', 'conversation', 'background',
]);

/** A chat tool, tool choice or format wraps what the Responses request holds flat: `tools[0].function.name` is `tools[0].name`. */
const UNWRAP_FUNCTION: InnerRenames = { '.function': '' };
const FUNCTION_CALL: InnerRenames = { '.function': '', '.id': '.call_id' };
const FUNCTION_CALL_OUTPUT: InnerRenames = { '.tool_call_id': '.call_id', '.content': '.output' };
const IMAGE_PART: InnerRenames = { '.image_url.url': '.image_url' };
const WHOLE_CONTENT: InnerRenames = { '.content': '' };

/** The chat fields every translated Responses request names differently. */
function responsesPaths(): CallerPaths {
  const paths = new CallerPaths();
  paths.set('messages', 'input');
  paths.set('max_completion_tokens', 'max_output_tokens');
  paths.set('response_format', 'text.format', { '.json_schema': '' });
  paths.set('reasoning_effort', 'reasoning.effort');
  paths.set('stream_options', 'stream');
  paths.set('tool_choice', 'tool_choice', UNWRAP_FUNCTION);
  return paths;
}

/** The Responses request as the internal chat request; throws the 400 naming the field it cannot honour. */
export function readResponsesRequest(body: unknown): ResponsesRequest {
  if (!isObject(body)) throw invalidField('', 'The request body must be a JSON object.');
  refuseStateful(body);
  refuseUnknown(body, KNOWN, ENDPOINT, 'docs/responses.md');
  const model = stringField(body['model'], 'model');
  if (body['truncation'] !== undefined && body['truncation'] !== null && body['truncation'] !== 'disabled') {
    throw unsupportedField('truncation', `'truncation' ${shown(body['truncation'])} is not supported: this gateway never drops input; send "disabled" or leave it out.`);
  }
  const paths = responsesPaths();
  const chat: Record<string, unknown> = { model, messages: messagesOf(body['input'], body['instructions'], paths) };
  const stream = body['stream'] === true;
  if (body['stream'] !== undefined && body['stream'] !== null && typeof body['stream'] !== 'boolean') throw invalidField('stream', `Invalid 'stream': expected a boolean.`);
  if (stream) {
    chat['stream'] = true;
    chat['stream_options'] = { include_usage: true };
  }
  if (body['tools'] !== undefined && body['tools'] !== null) chat['tools'] = toolsOf(body['tools'], paths);
  if (body['tool_choice'] !== undefined && body['tool_choice'] !== null) chat['tool_choice'] = toolChoiceOf(body['tool_choice']);
  if (body['max_output_tokens'] !== undefined && body['max_output_tokens'] !== null) chat['max_completion_tokens'] = body['max_output_tokens'];
  copyPresent(body, chat, ['parallel_tool_calls', 'temperature', 'top_p', 'user', 'prompt_cache_key', 'service_tier', 'safety_identifier']);
  const format = formatOf(body['text']);
  if (format) chat['response_format'] = format;
  const reasoning = body['reasoning'];
  if (reasoning !== undefined && reasoning !== null) {
    if (!isObject(reasoning)) throw invalidField('reasoning', `Invalid 'reasoning': expected an object.`);
    // `summary` is a hint: the reasoning text the provider gives is what the summary holds.
    if (reasoning['effort'] !== undefined && reasoning['effort'] !== null) chat['reasoning_effort'] = reasoning['effort'];
  }
  return { chat, stream, includeEncrypted: includesEncrypted(body['include']), echo: echoOf(body), paths };
}

/** What a stateless gateway cannot do, on every route, native or not: refused before anything is sent. */
export function refuseStateful(body: Record<string, unknown>): void {
  const stateless = 'this gateway is stateless and stores no responses: send the whole conversation as input items';
  if (body['previous_response_id'] !== undefined && body['previous_response_id'] !== null) {
    throw unsupportedField('previous_response_id', `'previous_response_id' is not supported: ${stateless}.`);
  }
  if (body['conversation'] !== undefined && body['conversation'] !== null) throw unsupportedField('conversation', `'conversation' is not supported: ${stateless}.`);
  if (body['background'] === true) throw unsupportedField('background', `'background' true is not supported: this gateway answers in the request (stream: true for long answers).`);
}

function includesEncrypted(include: unknown): boolean {
  if (include === undefined || include === null) return false;
  if (!Array.isArray(include)) throw invalidField('include', `Invalid 'include': expected an array of strings.`);
  include.forEach((entry, i) => {
    if (entry !== 'reasoning.encrypted_content') throw unsupportedField(`include[${i}]`, `'include[${i}]' ${shown(entry)} is not supported: only "reasoning.encrypted_content" is.`);
  });
  return include.length > 0;
}

function echoOf(body: Record<string, unknown>): Record<string, unknown> {
  return {
    instructions: typeof body['instructions'] === 'string' ? body['instructions'] : null,
    metadata: isObject(body['metadata']) ? body['metadata'] : {},
    max_output_tokens: typeof body['max_output_tokens'] === 'number' ? body['max_output_tokens'] : null,
    temperature: typeof body['temperature'] === 'number' ? body['temperature'] : null,
    top_p: typeof body['top_p'] === 'number' ? body['top_p'] : null,
    parallel_tool_calls: typeof body['parallel_tool_calls'] === 'boolean' ? body['parallel_tool_calls'] : true,
    tool_choice: body['tool_choice'] ?? 'auto',
    tools: Array.isArray(body['tools']) ? body['tools'] : [],
    text: isObject(body['text']) ? body['text'] : { format: { type: 'text' } },
    reasoning: isObject(body['reasoning']) ? body['reasoning'] : { effort: null, summary: null },
    user: typeof body['user'] === 'string' ? body['user'] : null,
  };
}

/**
 * `instructions` and system/developer items merge into one leading system message (templates refuse later ones).
 * Each chat message's path is recorded as the item it came from.
 */
function messagesOf(input: unknown, instructions: unknown, paths: CallerPaths): Record<string, unknown>[] {
  const into: Conversation = { system: [], messages: [], origins: [], replay: readReasoningReplay() };
  if (instructions !== undefined && instructions !== null) {
    into.system.push(stringField(instructions, 'instructions'));
    into.systemOrigin = 'instructions';
  }
  if (typeof input === 'string') {
    into.messages.push({ role: 'user', content: input });
    into.origins.push([0, '', 'input', WHOLE_CONTENT]);
  } else if (Array.isArray(input)) {
    input.forEach((item, i) => readItem(item, `input[${i}]`, into));
  } else {
    throw invalidField('input', `Invalid 'input': expected a string or an array of input items.`);
  }
  if (into.messages.length === 0) throw invalidField('input', `Invalid 'input': there is no user or assistant message to answer.`);
  const first = into.system.length > 0 ? 1 : 0;
  if (into.systemOrigin) paths.set('messages[0]', into.systemOrigin, into.systemOrigin === 'instructions' ? WHOLE_CONTENT : undefined);
  for (const [index, below, caller, inner] of into.origins) paths.set(`messages[${first + index}]${below}`, caller, inner);
  return first ? [{ role: 'system', content: into.system.join('\n\n') }, ...into.messages] : into.messages;
}

interface Conversation {
  readonly system: string[];
  /** Where the system message's text starts in the caller's request: instructions, else the first system item. */
  systemOrigin?: string;
  readonly messages: Record<string, unknown>[];
  /** A chat message's index, a path below it ('' or `.tool_calls[0]`), and the caller's path it came from. */
  readonly origins: [number, string, string, InnerRenames?][];
  readonly replay: ReturnType<typeof readReasoningReplay>;
}

function readItem(item: unknown, path: string, into: Conversation): void {
  if (!isObject(item)) throw invalidField(path, `Invalid '${path}': expected an object.`);
  const type = item['type'] ?? 'message';
  switch (type) {
    case 'message':
      return readMessage(item, path, into);
    case 'function_call': {
      const call = { id: stringField(item['call_id'], `${path}.call_id`), type: 'function', function: { name: stringField(item['name'], `${path}.name`), arguments: stringField(item['arguments'], `${path}.arguments`) } };
      const assistant = openAssistant(into, path);
      const calls = (assistant['tool_calls'] as unknown[] | undefined) ?? (assistant['tool_calls'] = []);
      into.origins.push([into.messages.length - 1, `.tool_calls[${calls.length}]`, path, FUNCTION_CALL]);
      calls.push(call);
      return;
    }
    case 'function_call_output':
      into.origins.push([into.messages.length, '', path, FUNCTION_CALL_OUTPUT]);
      into.messages.push({ role: 'tool', tool_call_id: stringField(item['call_id'], `${path}.call_id`), content: outputText(item['output'], `${path}.output`) });
      return;
    case 'reasoning':
      into.replay.take(item, path);
      return;
    case 'item_reference':
      throw unsupportedField(
        path,
        `'${path}' is an item_reference (${shown(item['id'])}): this gateway is stateless and cannot look items up; send the items themselves (with the Vercel AI SDK: providerOptions.openai.store = false).`,
      );
    default:
      throw unsupportedField(`${path}.type`, `'${path}.type' ${shown(type)} is not supported: this gateway takes message, function_call, function_call_output and reasoning items.`);
  }
}

/** The assistant message the current turn's tool calls and replayed reasoning join. */
function openAssistant(into: Conversation, path: string): Record<string, unknown> {
  const last = into.messages.at(-1);
  if (last && last['role'] === 'assistant') return last;
  const assistant: Record<string, unknown> = { role: 'assistant', content: null };
  into.replay.attach(assistant);
  into.origins.push([into.messages.length, '', path]);
  into.messages.push(assistant);
  return assistant;
}

function readMessage(item: Record<string, unknown>, path: string, into: Conversation): void {
  const role = item['role'];
  const content = item['content'];
  if (role === 'system' || role === 'developer') {
    into.systemOrigin ??= path;
    into.system.push(typeof content === 'string' ? content : partsOf(content, `${path}.content`, role).map((part) => part['text']).join(''));
    return;
  }
  if (role === 'assistant') {
    const text = typeof content === 'string' ? content : partsOf(content, `${path}.content`, role).map((part) => part['text']).join('');
    const assistant: Record<string, unknown> = { role: 'assistant', content: text };
    into.replay.attach(assistant);
    into.origins.push([into.messages.length, '', path]);
    into.messages.push(assistant);
    return;
  }
  if (role !== 'user') throw invalidField(`${path}.role`, `Invalid '${path}.role' ${shown(role)}: expected user, assistant, system or developer.`);
  const parts = typeof content === 'string' ? content : partsOf(content, `${path}.content`, role);
  into.origins.push([into.messages.length, '', path]);
  // A chat image part holds its URL one level deeper than the input_image part: image_url.url is the caller's image_url.
  if (Array.isArray(parts)) parts.forEach((part, i) => part['type'] === 'image_url' && into.origins.push([into.messages.length, `.content[${i}]`, `${path}.content[${i}]`, IMAGE_PART]));
  into.messages.push({ role: 'user', content: parts });
}

/** Content parts as chat parts: input_text and output_text as text, input_image as image_url. */
function partsOf(content: unknown, path: string, role: string): Record<string, unknown>[] {
  if (!Array.isArray(content)) throw invalidField(path, `Invalid '${path}': expected a string or an array of content parts.`);
  return content.map((part, i) => {
    const at = `${path}[${i}]`;
    if (!isObject(part)) throw invalidField(at, `Invalid '${at}': expected an object.`);
    switch (part['type']) {
      case 'input_text':
      case 'output_text':
        return { type: 'text', text: stringField(part['text'], `${at}.text`) };
      case 'input_image': {
        if (role !== 'user') throw unsupportedField(at, `'${at}': images are taken in user messages only.`);
        if (typeof part['image_url'] !== 'string') throw unsupportedField(`${at}.image_url`, `'${at}' needs image_url (a URL or a data: URL): this gateway stores no files, so file_id cannot be resolved.`);
        const image: Record<string, unknown> = { url: part['image_url'] };
        if (part['detail'] === 'low' || part['detail'] === 'high') image['detail'] = part['detail'];
        return { type: 'image_url', image_url: image };
      }
      default:
        throw unsupportedField(`${at}.type`, `'${at}.type' ${shown(part['type'])} is not supported: input_text, output_text and input_image are.`);
    }
  });
}

function outputText(output: unknown, path: string): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) {
    return output
      .map((part, i) => {
        if (isObject(part) && (part['type'] === 'input_text' || part['type'] === 'output_text')) return stringField(part['text'], `${path}[${i}].text`);
        throw unsupportedField(`${path}[${i}]`, `'${path}[${i}]': a function_call_output takes text only here.`);
      })
      .join('');
  }
  throw invalidField(path, `Invalid '${path}': expected a string or an array of text parts.`);
}

function toolsOf(tools: unknown, paths: CallerPaths): Record<string, unknown>[] {
  if (!Array.isArray(tools)) throw invalidField('tools', `Invalid 'tools': expected an array.`);
  return tools.map((tool, i) => {
    paths.set(`tools[${i}]`, `tools[${i}]`, UNWRAP_FUNCTION);
    if (!isObject(tool)) throw invalidField(`tools[${i}]`, `Invalid 'tools[${i}]': expected an object.`);
    if (tool['type'] !== 'function') {
      throw unsupportedField(`tools[${i}].type`, `'tools[${i}].type' ${shown(tool['type'])} is not supported on this route: built-in tools run and bill at the provider, and only a model marked api: responses whose routes.yaml allow_fields lists built_in_tools takes them; send function tools.`);
    }
    const fn: Record<string, unknown> = { name: stringField(tool['name'], `tools[${i}].name`) };
    copyPresent(tool, fn, ['description', 'parameters', 'strict']);
    if (fn['strict'] === null) delete fn['strict'];
    if (fn['description'] === null) delete fn['description'];
    return { type: 'function', function: fn };
  });
}

function toolChoiceOf(choice: unknown): unknown {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (isObject(choice) && choice['type'] === 'function') return { type: 'function', function: { name: stringField(choice['name'], 'tool_choice.name') } };
  throw unsupportedField('tool_choice', `'tool_choice' ${shown(choice)} is not supported: send auto, none, required or {"type":"function","name":…}.`);
}

/** `text.format` as the chat `response_format`; `text.verbosity` is a hint with no counterpart on every route, dropped. */
function formatOf(text: unknown): Record<string, unknown> | undefined {
  if (text === undefined || text === null) return undefined;
  if (!isObject(text)) throw invalidField('text', `Invalid 'text': expected an object.`);
  const format = text['format'];
  if (format === undefined || format === null) return undefined;
  if (!isObject(format)) throw invalidField('text.format', `Invalid 'text.format': expected an object.`);
  switch (format['type']) {
    case 'text':
      return undefined;
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      const schema: Record<string, unknown> = { name: stringField(format['name'], 'text.format.name') };
      copyPresent(format, schema, ['schema', 'strict', 'description']);
      return { type: 'json_schema', json_schema: schema };
    }
    default:
      throw unsupportedField('text.format.type', `'text.format.type' ${shown(format['type'])} is not supported: text, json_object and json_schema are.`);
  }
}
