import type { ErrorBody } from '../../generated/types/error-envelope.js';
import type { Usage } from '../../generated/types/usage.js';
import { editTopLevel, replaceSpan, scanTopLevel, topLevelValueAt, type Span, type TopLevelScan } from '../../engine/json-top-level.js';
import { SSE_DONE, sseData, sseError } from '../../engine/sse-format.js';
import type { StreamContext, StreamStep, StreamTranslator } from '../dialect.js';
import { isObject, parseJson } from '../json-values.js';
import { providerStreamErrorBody, type StreamErrorFields } from '../stream-error.js';

const CONTINUE: StreamStep = { frames: '' };

/**
 * OpenAI-compatible chunks go through as they came, with `model` rewritten in place: one scan per
 * event, no parse or serialise, except for the rare events that carry an error or usage. Keys are
 * read as a JSON parser reads them (escapes decoded, every duplicate counted), so what the caller's
 * parser finds at the top level is the routing model, never hidden usage, and never an unnoticed error.
 */
export function createOpenAIStreamTranslator({ routingModel, providerId, hideUsage }: StreamContext): StreamTranslator {
  const encodedModel = JSON.stringify(routingModel);
  return {
    translate(message) {
      if (message.kind === 'comment') return { frames: `: ${message.text}\n\n` };
      const { data } = message;
      if (data === '[DONE]') return { frames: SSE_DONE, end: 'done' };
      const common = rewriteCommonChunk(data, encodedModel, hideUsage);
      if (common !== undefined) return { frames: sseData(common) };
      const scan = scanTopLevel(data);
      // Not a JSON object (a key with an escape JSON does not have included): nothing to rewrite, and the caller may know what it is.
      if (!scan) return data === '' ? CONTINUE : { frames: sseData(data) };
      const error = errorValue(data, scan);
      if (error) return { frames: sseError(streamErrorBody(data.slice(error.start, error.end), providerId)), end: 'error' };
      // A parser keeps the last of duplicated keys: that usage is the one counted, and every copy is hidden.
      const usageIndex = scan.keys.lastIndexOf('usage');
      const usageSpan = usageIndex < 0 ? undefined : scan.values[usageIndex]!;
      const usage = usageSpan ? (parseObject(data.slice(usageSpan.start, usageSpan.end)) as Usage | undefined) : undefined;
      const edits = new Map<string, string | undefined>([['model', encodedModel]]);
      if (hideUsage) {
        // The caller did not ask for usage: drop the usage-only chunk and the usage fields of the others.
        const choicesIndex = scan.keys.lastIndexOf('choices');
        const choices = choicesIndex < 0 ? '' : data.slice(scan.values[choicesIndex]!.start, scan.values[choicesIndex]!.end);
        if (usage && /^\[\s*\]$/.test(choices)) return { frames: '', usage };
        if (usageSpan) edits.set('usage', undefined);
      }
      const frames = sseData(editTopLevel(data, scan, edits));
      return usage ? { frames, usage } : { frames };
    },
  };
}

const KEYS_THAT_MATTER = /"(?:model|error|usage)"/g;
const USAGE_NULL_END = ',"usage":null}';
/** A `\u` escape of a lowercase letter: the only way a key can spell model, error or usage other than literally. */
const ESCAPED_LOWERCASE_LETTER = /\\u00[67]/;

/**
 * The common chunk, rewritten without a full scan: `"model"` once and at the top level, no `"error"`
 * anywhere, and usage absent or `,"usage":null` closing the event (OpenAI puts it on every chunk once
 * usage is asked for); only the entries before model are walked. Exact for every event it takes: the
 * search is for literal spellings, so an event that may spell a key with escapes (`"mod\u0065l"`) is
 * left to the full scan, which decodes keys. Undefined when the event is not such a chunk.
 */
function rewriteCommonChunk(data: string, encodedModel: string, hideUsage: boolean): string | undefined {
  if (data.includes('\\u') && ESCAPED_LOWERCASE_LETTER.test(data)) return undefined;
  const keys = findKeys(data);
  if (keys.modelAt < 0 || keys.error) return undefined;
  const trailingUsageNull = keys.usageAt === data.length - USAGE_NULL_END.length + 1 && data.endsWith(USAGE_NULL_END);
  if (keys.usageAt >= 0 && !trailingUsageNull) return undefined;
  const span = topLevelValueAt(data, keys.modelAt);
  if (!span) return undefined;
  // model stands before the usage that closes the event, so the rewrite leaves that ending in place.
  const rewritten = replaceSpan(data, span, encodedModel);
  return hideUsage && trailingUsageNull ? `${rewritten.slice(0, -USAGE_NULL_END.length)}}` : rewritten;
}

/** Where `"model"` and `"usage"` stand when each appears at most once (-1: absent or repeated), and whether `"error"` appears. */
function findKeys(data: string): { modelAt: number; usageAt: number; error: boolean } {
  KEYS_THAT_MATTER.lastIndex = 0;
  let modelAt = -1;
  let usageAt = -1;
  for (let match = KEYS_THAT_MATTER.exec(data); match; match = KEYS_THAT_MATTER.exec(data)) {
    if (match[0] === '"error"') return { modelAt: -1, usageAt: -1, error: true };
    if (match[0] === '"model"') {
      if (modelAt >= 0) return { modelAt: -1, usageAt: -1, error: false };
      modelAt = match.index;
    } else {
      if (usageAt >= 0) return { modelAt: -1, usageAt: -1, error: false };
      usageAt = match.index;
    }
  }
  return { modelAt, usageAt, error: false };
}

/**
 * The value of a top-level `error` that is not null (`"error":null` rides on some healthy chunks).
 * Of duplicates, the last such one: an event any reader could take for an error is one.
 */
function errorValue(data: string, scan: TopLevelScan): Span | undefined {
  for (let i = scan.keys.length - 1; i >= 0; i--) {
    const value = scan.values[i]!;
    if (scan.keys[i] === 'error' && data.slice(value.start, value.end) !== 'null') return value;
  }
  return undefined;
}

/** A provider's in-stream error (OpenRouter sends one after the 200), from its `error` value, as the gateway's envelope. */
function streamErrorBody(errorText: string, providerId: string): ErrorBody {
  const error = parseJson(errorText);
  const details = error !== null && typeof error === 'object' ? (error as Record<string, unknown>) : {};
  const message = typeof details['message'] === 'string' ? details['message'] : typeof error === 'string' ? error : null;
  const fields: StreamErrorFields = {
    message,
    type: typeof details['type'] === 'string' ? details['type'] : null,
    // A numeric code is an HTTP status (OpenRouter's 502), not an OpenAI-style code; provider_code keeps it.
    code: typeof details['code'] === 'string' && !/^\d+$/.test(details['code']) ? details['code'] : null,
    param: typeof details['param'] === 'string' ? details['param'] : null,
    providerCode: typeof details['code'] === 'string' || typeof details['code'] === 'number' ? String(details['code']) : null,
  };
  return providerStreamErrorBody(fields, providerId);
}

function parseObject(text: string): Record<string, unknown> | undefined {
  const value = parseJson(text);
  return isObject(value) ? value : undefined;
}
