import { invalid, jsonObject, shown, unsupported, type JsonNode } from '../../anthropic/request/json-node.js';
import { isObject, parseJson } from '../../json-values.js';

/**
 * Google's documented value for a replayed function call whose signature was lost: it tells a model that
 * requires signatures (Gemini 3) to skip the check instead of refusing the request with a 400.
 */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

/** The caller's conversation in Gemini's shape. */
export interface Contents {
  /** Text parts of the system and developer messages, in order. */
  readonly system: string[];
  readonly contents: string[];
}

/**
 * system/developer → systemInstruction text; user → user content; assistant → model content (text, then
 * each tool call as a functionCall part with its thought signature); each run of tool messages → one user
 * content of functionResponse parts, each named by the assistant's call of that id. `requireSignatures`:
 * the model refuses a replayed call without its signature, so the first call of a turn that has none gets
 * SKIP_SIGNATURE.
 */
export function contentsOf(messages: JsonNode, requireSignatures: boolean): Contents {
  const system: string[] = [];
  const contents: string[] = [];
  let responses: string[] = [];
  let callNames = new Map<string, string>();
  // Gemini refuses a content without parts; an empty message says nothing, so it is left out.
  const push = (role: 'user' | 'model', parts: string[]) => void (parts.length > 0 && contents.push(content(role, parts)));
  const flush = () => {
    if (responses.length > 0) contents.push(content('user', responses));
    responses = [];
  };
  for (const message of messages.items()) {
    const role = message.field('role')?.value;
    if (message.given('name') !== undefined && typeof role === 'string' && role !== 'function') {
      throw unsupported(`${message.path}.name`, `'${message.path}.name' has no Gemini form: put the name in the message's text instead.`);
    }
    if (role === 'tool') {
      responses.push(functionResponse(message, callNames));
      continue;
    }
    flush();
    if (role === 'system' || role === 'developer') system.push(...textParts(message, false));
    else if (role === 'user') push('user', textParts(message, true));
    else if (role === 'assistant') {
      callNames = new Map();
      push('model', modelParts(message, callNames, requireSignatures));
    } else throw unsupported(`${message.path}.role`, `'${message.path}.role' ${shown(role)} has no Gemini form: use system, developer, user, assistant or tool.`);
  }
  flush();
  return { system, contents };
}

function content(role: 'user' | 'model', parts: string[]): string {
  return `{"role":"${role}","parts":[${parts.join(',')}]}`;
}

/** A message's text (and, for user messages, image) parts. */
function textParts(message: JsonNode, allowImages: boolean): string[] {
  const body = message.given('content');
  if (body === undefined) return [];
  if (body.isString) return body.value === '' ? [] : [`{"text":${body.raw}}`];
  return body.items().map((part) => {
    const type = part.field('type')?.value;
    if (type === 'text') {
      const text = part.field('text');
      if (!text?.isString) throw invalid(`${part.path}.text`, `Invalid '${part.path}.text': expected a string.`);
      return `{"text":${text.raw}}`;
    }
    if (type === 'image_url' && allowImages) return inlineData(part);
    throw unsupported(part.path, `Content part type ${shown(type)} at '${part.path}' has no Gemini form here: send text${allowImages ? ' or image_url' : ''} parts.`);
  });
}

/** A data: URL image as inlineData. The gateway never fetches: any other URL is refused. `detail` is a hint with no Gemini form: dropped. */
function inlineData(part: JsonNode): string {
  const image = part.field('image_url');
  const param = image?.isString ? `${part.path}.image_url` : `${part.path}.image_url.url`;
  const url = (image?.isString ? image : image?.field('url'))?.value;
  if (typeof url !== 'string') throw invalid(param, `Invalid '${param}': expected a string URL.`);
  const data = DATA_URL.exec(url);
  if (!data) throw unsupported(param, `Invalid '${param}': the gateway sends Gemini images only as data: URLs (data:<media type>;base64,<data>); it never fetches a URL.`);
  return `{"inlineData":{"mimeType":${JSON.stringify(data[1]!)},"data":${JSON.stringify(data[2]!)}}}`;
}

/** An assistant message: its text (with the message's signature on the last text part), then its calls. */
function modelParts(message: JsonNode, callNames: Map<string, string>, requireSignatures: boolean): string[] {
  const parts = textParts(message, false);
  const messageSignature = signatureOf(message);
  if (messageSignature && parts.length > 0) parts[parts.length - 1] = parts.at(-1)!.replace(/}$/, `,"thoughtSignature":${messageSignature}}`);
  message.given('tool_calls')?.items().forEach((call, index) => {
    const fn = call.field('function');
    const name = fn?.field('name');
    if (!name?.isString) throw invalid(`${call.path}.function.name`, `Invalid '${call.path}.function.name': expected a string.`);
    const id = call.field('id')?.value;
    if (typeof id === 'string') callNames.set(id, name.value as string);
    const args = fn!.field('arguments');
    const text = typeof args?.value === 'string' ? args.value : undefined;
    // The arguments' own text is spliced (numbers and key order as the model wrote them) once it is known to be an object.
    if (text === undefined || !isObject(parseJson(text))) {
      throw invalid(`${call.path}.function.arguments`, `Invalid '${call.path}.function.arguments': expected a JSON object as text.`);
    }
    const entries: [string, string][] = [['functionCall', `{"name":${name.raw},"args":${text}}`]];
    const signature = signatureOf(call) ?? (requireSignatures && index === 0 ? JSON.stringify(SKIP_SIGNATURE) : undefined);
    if (signature) entries.push(['thoughtSignature', signature]);
    parts.push(jsonObject(entries));
  });
  return parts;
}

/** `extra_content.google.thought_signature` as the caller sent it (JSON text), else undefined. */
function signatureOf(node: JsonNode): string | undefined {
  const signature = node.field('extra_content')?.field('google')?.given('thought_signature');
  if (signature === undefined) return undefined;
  if (!signature.isString) throw invalid(signature.path, `Invalid '${signature.path}': expected a string.`);
  return signature.raw;
}

/** A tool message as a functionResponse part; a result that is not a JSON object is wrapped as `{"output": …}`. */
function functionResponse(message: JsonNode, callNames: ReadonlyMap<string, string>): string {
  const id = message.field('tool_call_id')?.value;
  const name = typeof id === 'string' ? callNames.get(id) : undefined;
  if (name === undefined) {
    throw invalid(`${message.path}.tool_call_id`, `'${message.path}.tool_call_id' ${shown(id)} names no tool call of the assistant message before it: Gemini needs the function's name.`);
  }
  const body = message.given('content');
  let text: string;
  if (body === undefined) text = '';
  else if (body.isString) text = body.value as string;
  else text = textParts(message, false).map((part) => (JSON.parse(part) as { text: string }).text).join('');
  const response = isObject(parseJson(text)) ? text : `{"output":${JSON.stringify(text)}}`;
  return `{"functionResponse":{"name":${JSON.stringify(name)},"response":${response}}}`;
}
