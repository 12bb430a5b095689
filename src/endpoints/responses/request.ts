import { copyPresent, invalidField, isObject, refuseUnknown, shown, stringField, unsupportedField } from '../inbound-fields.js';
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
}

const ENDPOINT = 'POST /v1/responses';
const KNOWN = new Set([
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'max_output_tokens', 'temperature', 'top_p',
  'text', 'reasoning', 'include', 'stream', 'store', 'metadata', 'user', 'prompt_cache_key', 'service_tier', 'truncation',
  'stream_options', 'safety_identifier', 'previous_response_id', 'conversation', 'background',
]);

/** The Responses request as the internal chat request; throws the 400 naming the field it cannot honour. */
export function readResponsesRequest(body: unknown): ResponsesRequest {
  if (!isObject(body)) throw invalidField('', 'The request body must be a JSON object.');
  refuseStateful(body);
  refuseUnknown(body, KNOWN, ENDPOINT);
  const model = stringField(body['model'], 'model');
  if (body['truncation'] !== undefined && body['truncation'] !== null && body['truncation'] !== 'disabled') {
    throw unsupportedField('truncation', `'truncation' ${shown(body['truncation'])} is not supported: this gateway never drops input; send "disabled" or leave it out.`);
  }
  const chat: Record<string, unknown> = { model, messages: messagesOf(body['input'], body['instructions']) };
  const stream = body['stream'] === true;
  if (body['stream'] !== undefined && body['stream'] !== null && typeof body['stream'] !== 'boolean') throw invalidField('stream', `Invalid 'stream': expected a boolean.`);
  if (stream) {
    chat['stream'] = true;
    chat['stream_options'] = { include_usage: true };
  }
  if (body['tools'] !== undefined && body['tools'] !== null) chat['tools'] = toolsOf(body['tools']);
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
  return { chat, stream, includeEncrypted: includesEncrypted(body['include']), echo: echoOf(body) };
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

/** `instructions` and system/developer items merge into one leading system message (templates refuse later ones). */
function messagesOf(input: unknown, instructions: unknown): Record<string, unknown>[] {
  const system: string[] = [];
  if (instructions !== undefined && instructions !== null) system.push(stringField(instructions, 'instructions'));
  const messages: Record<string, unknown>[] = [];
  if (typeof input === 'string') {
    messages.push({ role: 'user', content: input });
  } else if (Array.isArray(input)) {
    const replay = readReasoningReplay();
    input.forEach((item, i) => readItem(item, `input[${i}]`, { system, messages, replay }));
  } else {
    throw invalidField('input', `Invalid 'input': expected a string or an array of input items.`);
  }
  if (messages.length === 0) throw invalidField('input', `Invalid 'input': there is no user or assistant message to answer.`);
  return system.length > 0 ? [{ role: 'system', content: system.join('\n\n') }, ...messages] : messages;
}

interface Conversation {
  readonly system: string[];
  readonly messages: Record<string, unknown>[];
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
      const assistant = openAssistant(into);
      (assistant['tool_calls'] as unknown[] | undefined)?.push(call) ?? (assistant['tool_calls'] = [call]);
      return;
    }
    case 'function_call_output':
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
function openAssistant(into: Conversation): Record<string, unknown> {
  const last = into.messages.at(-1);
  if (last && last['role'] === 'assistant') return last;
  const assistant: Record<string, unknown> = { role: 'assistant', content: null };
  into.replay.attach(assistant);
  into.messages.push(assistant);
  return assistant;
}

function readMessage(item: Record<string, unknown>, path: string, into: Conversation): void {
  const role = item['role'];
  const content = item['content'];
  if (role === 'system' || role === 'developer') {
    into.system.push(typeof content === 'string' ? content : partsOf(content, `${path}.content`, role).map((part) => part['text']).join(''));
    return;
  }
  if (role === 'assistant') {
    const text = typeof content === 'string' ? content : partsOf(content, `${path}.content`, role).map((part) => part['text']).join('');
    const assistant: Record<string, unknown> = { role: 'assistant', content: text };
    into.replay.attach(assistant);
    into.messages.push(assistant);
    return;
  }
  if (role !== 'user') throw invalidField(`${path}.role`, `Invalid '${path}.role' ${shown(role)}: expected user, assistant, system or developer.`);
  into.messages.push({ role: 'user', content: typeof content === 'string' ? content : partsOf(content, `${path}.content`, role) });
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

function toolsOf(tools: unknown): Record<string, unknown>[] {
  if (!Array.isArray(tools)) throw invalidField('tools', `Invalid 'tools': expected an array.`);
  return tools.map((tool, i) => {
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
