import type { Usage } from '../../generated/types/usage.js';
import { scanTopLevel } from '../../wire/json-top-level.js';
import { editTopLevel, setTopLevel, setTopLevelString, type TopLevelEdit, type TopLevelSet } from '../../wire/json-top-level-edit.js';
import type { Dialect, OutgoingCall } from '../dialect.js';
import { isObject } from '../json-values.js';
import { sseStreamReader } from '../sse-stream-reader.js';
import { refuseOverOutputLimit } from '../output-limit.js';
import { refuseGatedField, refuseGatedFields } from './gated-fields.js';
import { reasoningModelEdits } from './reasoning-model.js';
import { openaiNative } from './responses-native.js';
import { openaiEmbeddings } from './embeddings.js';
import { createOpenAIStreamTranslator } from './stream.js';

/**
 * The caller's `stream_options` with `include_usage` set and nothing else touched: numbers, key order,
 * spacing and nesting of any depth reach the provider as written. Applied to every copy of a duplicated
 * `stream_options`; a copy that is null or absent (or, in a duplicate the schema did not see, not an
 * object) becomes one asking for usage.
 */
function askForUsage(current: string | undefined): string {
  return (current !== undefined && setTopLevel(current, [INCLUDE_USAGE])) || '{"include_usage":true}';
}

const INCLUDE_USAGE: TopLevelSet = { key: 'include_usage', json: 'true' };

/** OpenAI-compatible providers: chat completions on both sides, so the body and every chunk go through nearly as sent. */
export const openaiDialect: Dialect = {
  buildRequest(call) {
    refuseOverOutputLimit(call);
    return { path: 'chat/completions', body: openaiRequestBody(call) };
  },

  readResponse(text, routingModel) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return undefined;
    }
    const withModel = isObject(parsed) ? setTopLevelString(text, 'model', routingModel) : undefined;
    if (withModel === undefined || !isObject(parsed)) return undefined;
    const choices = Array.isArray(parsed['choices']) ? (parsed['choices'] as unknown[]) : [];
    const described = { id: parsed['id'], model: parsed['model'], finishReasons: choices.map((choice) => (isObject(choice) ? choice['finish_reason'] : undefined)) };
    return { text: withModel, usage: isObject(parsed['usage']) ? (parsed['usage'] as Usage) : null, described };
  },

  readError(text) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { message: null, code: null };
    }
    // OpenAI: {"error":{"message","type","code"}}; Anthropic: {"type":"error","error":{"type","message"}};
    // some compatible servers: {"error":"text"} or {"message":"text"}; proxies in front of a provider wrap
    // its body once more, {"error":{"error":{…}}}: a level with neither message nor code is looked through.
    const saysSomething = (level: Record<string, unknown>) => [level['message'], level['code'], level['type']].some((value) => stringOrNull(value) !== null);
    let error = isObject(parsed) ? parsed['error'] : undefined;
    for (let depth = 0; depth < 4 && isObject(error) && error['error'] !== undefined && !saysSomething(error); depth++) error = error['error'];
    if (isObject(error)) {
      return { message: stringOrNull(error['message']), code: stringOrNull(error['code']) ?? stringOrNull(error['type']) };
    }
    if (typeof error === 'string') return { message: error, code: null };
    return { message: isObject(parsed) ? stringOrNull(parsed['message']) : null, code: null };
  },

  createStreamReader(context) {
    const translator = createOpenAIStreamTranslator(context);
    return sseStreamReader(translator, context.maxEventChars, translator.lane);
  },

  // POST /v1/responses goes natively to a model routes.yaml marks `api: responses`; POST /v1/embeddings to {base_url}/embeddings.
  native: (format, route) => (format === 'openai-embeddings' ? openaiEmbeddings : openaiNative(format, route)),
};

/**
 * The caller's body byte for byte except `model`, which is rewritten in place (so numbers, key order
 * and unknown fields reach the provider exactly as sent); a gated field routes.yaml does not allow is refused.
 * To a reasoning model (routes.yaml reasoning other than none), the fields OpenAI refuses there are mended or refused.
 */
export function openaiRequestBody(call: OutgoingCall): string {
  const { text, upstreamModel, requestStreamUsage, allowedFields } = call;
  if (call.reasoning !== 'none') return reasoningModelBody(call);
  // Only sets: one walk, no scan (what the scan and edit below give, test/dialects/openai/openai-request-body.test.ts).
  const model: TopLevelSet = { key: 'model', json: JSON.stringify(upstreamModel) };
  const body = setTopLevel(text, requestStreamUsage ? [model, STREAM_USAGE] : [model], (key, entry) => refuseGatedField(key, text, entry.valueStart, entry.valueEnd, allowedFields));
  // The engine only calls this with a parsed JSON object; undefined would be a bug here.
  if (body === undefined) throw new Error('request body is not a JSON object');
  return body;
}

const STREAM_USAGE: TopLevelSet = { key: 'stream_options', json: askForUsage };

/** openaiRequestBody's way with a scan and edits that may remove: a reasoning model's body, and the reference its walk is tested against. */
export function reasoningModelBody({ text, upstreamModel, requestStreamUsage, allowedFields, reasoning }: OutgoingCall): string {
  const scan = scanTopLevel(text);
  if (!scan) throw new Error('request body is not a JSON object');
  refuseGatedFields(text, scan, allowedFields);
  const edits = reasoning === 'none' ? new Map<string, TopLevelEdit>() : reasoningModelEdits(text, scan);
  edits.set('model', JSON.stringify(upstreamModel));
  // Edited in the text, never re-serialised: only include_usage may change.
  if (requestStreamUsage) edits.set('stream_options', askForUsage);
  return editTopLevel(text, scan, edits);
}

/** Codes may be numbers (OpenRouter sends 402); the envelope carries them as strings. */
function stringOrNull(value: unknown): string | null {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}
