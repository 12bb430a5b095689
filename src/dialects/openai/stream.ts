import type { Usage } from '../../generated/types/usage.js';
import { editTopLevel, replaceSpan, scanTopLevel, topLevelValueAt, type Span, type TopLevelScan } from '../../wire/json-top-level.js';
import { SSE_DONE, sseData, sseError } from '../../wire/sse-format.js';
import type { FastLane } from '../../wire/sse-parser.js';
import type { AnswerDescription, StreamContext, StreamReaderContext, StreamStep, StreamTranslator } from '../dialect.js';
import { isObject, parseJson } from '../json-values.js';
import { providerStreamErrorBody, type StreamErrorFields } from '../stream-error.js';

const CONTINUE: StreamStep = { frames: '' };

/**
 * OpenAI-compatible chunks go through as they came, with `model` rewritten in place: one scan per
 * event, no parse or serialise, except for the rare events that carry an error or usage. Keys are
 * read as a JSON parser reads them (escapes decoded, every duplicate counted), so what the caller's
 * parser finds at the top level is the routing model, never hidden usage, and never an unnoticed error.
 */
export function createOpenAIStreamTranslator(context: StreamContext | StreamReaderContext): StreamTranslator & { readonly lane: FastLane } {
  const { routingModel, providerId, hideUsage } = context;
  // The lane leaves larger events to the parser, which refuses them.
  const maxEventChars = 'maxEventChars' in context ? context.maxEventChars : Infinity;
  const encodedModel = JSON.stringify(routingModel);
  // A provider opens every chunk of a stream alike (id, object, created, model): once one common chunk has
  // shown that its opening puts model at the top level, a later chunk opening with the same text needs only
  // its rest checked, never the walk up to model again.
  let opening: CommonOpening | undefined;
  // The span's description (docs/observability.md): id and model of the first chunk (one parse per stream), finish reasons as they come.
  let first: { id: unknown; model: unknown } | undefined;
  const finishReasons: string[] = [];
  return {
    describe: (): AnswerDescription => ({ id: first?.id ?? null, model: first?.model ?? null, finishReasons }),
    translate(message) {
      if (message.kind === 'comment') return { frames: `: ${message.text}\n\n` };
      const { data } = message;
      if (data === '[DONE]') return { frames: SSE_DONE, end: 'done' };
      if (opening !== undefined && data.slice(0, opening.text.length) === opening.text) {
        const rest = restOfCommonChunk(data, opening.text.length, data.length, hideUsage);
        // Built in one go: sseData would flatten the joined string only to look for a line break.
        if (rest !== undefined) return { frames: opening.multiline || rest.includes('\n') ? sseData(opening.rewritten + rest) : `${DATA_FIELD}${opening.rewritten}${rest}\n\n` };
      }
      // Not a common chunk: the first, one with a finish reason (restOfCommonChunk leaves those here), usage, an error.
      first ??= idAndModel(data);
      noteFinishReasons(data, finishReasons);
      const common = rewriteCommonChunk(data, encodedModel, hideUsage);
      if (common !== undefined) {
        opening = common.opening ?? opening;
        return { frames: sseData(common.text) };
      }
      const scan = scanTopLevel(data);
      // Not a JSON object (a key with an escape JSON does not have included): nothing to rewrite, and the caller may know what it is.
      if (!scan) return data === '' ? CONTINUE : { frames: sseData(data) };
      const error = errorValue(data, scan);
      if (error) {
        const { fields, status } = streamErrorFields(data.slice(error.start, error.end));
        return { frames: sseError(providerStreamErrorBody(fields, providerId)), end: 'error', failure: { status, details: { message: fields.message, code: fields.providerCode } } };
      }
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
    // Common chunks that open like the last one, taken straight from the parser's text: no message, no step each.
    lane: {
      take(text, at) {
        if (opening === undefined || opening.multiline) return undefined;
        const { line, rewritten } = opening;
        let frames = '';
        let pos = at;
        // (slice and compare: cheaper than startsWith with a position)
        while (text.slice(pos, pos + line.length) === line) {
          const lf = text.indexOf('\n', pos + line.length);
          // Complete, one data line, not larger than the parser allows: else the parser has it.
          if (lf < 0 || text.charCodeAt(lf + 1) !== 0x0a || lf - pos - DATA_FIELD.length > maxEventChars) break;
          const rest = restOfCommonChunk(text, pos + line.length, lf, hideUsage);
          if (rest === undefined) break;
          frames += `${DATA_FIELD}${rewritten}${rest}\n\n`;
          pos = lf + 2;
        }
        return pos === at ? undefined : { frames, end: pos };
      },
    },
  };
}

const FINISH_REASON = '"finish_reason":"';
/** A span takes at most 16 finish reasons, each cut to 256 characters. */
const MAX_FINISH_REASONS = 16;
const MAX_FINISH_REASON_CHARS = 256;

/** The non-null finish reasons of a chunk's choices, added to `into` (a plain-string search: most chunks have none). */
function noteFinishReasons(text: string, into: string[]): void {
  for (let at = text.indexOf(FINISH_REASON); at >= 0 && into.length < MAX_FINISH_REASONS; at = text.indexOf(FINISH_REASON, at + 1)) {
    const start = at + FINISH_REASON.length;
    const end = text.indexOf('"', start);
    if (end < 0) return;
    into.push(text.slice(start, Math.min(end, start + MAX_FINISH_REASON_CHARS)));
  }
}

/** The provider's id and model of its first chunk, as it sent them. */
function idAndModel(data: string): { id: unknown; model: unknown } {
  const parsed = parseJson(data);
  return isObject(parsed) ? { id: parsed['id'], model: parsed['model'] } : { id: null, model: null };
}

const KEYS_THAT_MATTER = /"(?:model|error|usage)"/g;
const USAGE_NULL_END = ',"usage":null}';
const QUOTE = 0x22;
const DATA_FIELD = 'data: ';
/** What follows the usage key in USAGE_NULL_END. */
const USAGE_NULL_AFTER_KEY = ':null}'.length;
/** A key that matters, or an escape that may spell one, or a finish reason (a chunk with one goes to translate, which notes it for the span). */
const KEY_OR_ESCAPE = /"(?:model|error|usage)"|\\u00[67]|"finish_reason":"/g;
/** A `\u` escape of a lowercase letter: the only way a key can spell model, error or usage other than literally. */
const ESCAPED_LOWERCASE_LETTER = /\\u00[67]/;

/** The text of a common chunk up to the end of its model value, and the same with the routing model in it. */
interface CommonOpening {
  readonly text: string;
  /** The opening as the data line that carries it starts. */
  readonly line: string;
  readonly rewritten: string;
  /** The opening holds a line break (the event came as several data lines). */
  readonly multiline: boolean;
}

/**
 * The rest of a chunk (from `openingEnd`, after a known opening, to `end`) as the caller gets it, or undefined
 * when the chunk is not common: the same checks as rewriteCommonChunk, on the rest alone, since the opening
 * passed them already (no escaped lowercase letter, model once and at the top level, no error, no usage).
 */
function restOfCommonChunk(text: string, openingEnd: number, end: number, hideUsage: boolean): string | undefined {
  // One pass from the opening's last character on, so a key spelled across the boundary (`"x"model"`) is found
  // too. A match ending past `end` is in a later event (none can span a line break).
  KEY_OR_ESCAPE.lastIndex = openingEnd - 1;
  if (!KEY_OR_ESCAPE.test(text) || KEY_OR_ESCAPE.lastIndex > end) return text.slice(openingEnd, end);
  // The first match ends where `,"usage":null}` puts its key: it is that usage, and the only key found.
  if (KEY_OR_ESCAPE.lastIndex !== end - USAGE_NULL_AFTER_KEY || text.slice(end - USAGE_NULL_END.length, end) !== USAGE_NULL_END) return undefined;
  return hideUsage ? `${text.slice(openingEnd, end - USAGE_NULL_END.length)}}` : text.slice(openingEnd, end);
}

/**
 * The common chunk, rewritten without a full scan: `"model"` once and at the top level, no `"error"`
 * anywhere, and usage absent or `,"usage":null` closing the event (OpenAI puts it on every chunk once
 * usage is asked for); only the entries before model are walked. Exact for every event it takes: the
 * search is for literal spellings, so an event that may spell a key with escapes (`"mod\u0065l"`) is
 * left to the full scan, which decodes keys. Undefined when the event is not such a chunk.
 */
function rewriteCommonChunk(data: string, encodedModel: string, hideUsage: boolean): { text: string; opening: CommonOpening | undefined } | undefined {
  if (data.includes('\\u') && ESCAPED_LOWERCASE_LETTER.test(data)) return undefined;
  const keys = findKeys(data);
  if (keys.modelAt < 0 || keys.error) return undefined;
  const trailingUsageNull = keys.usageAt === data.length - USAGE_NULL_END.length + 1 && data.endsWith(USAGE_NULL_END);
  if (keys.usageAt >= 0 && !trailingUsageNull) return undefined;
  const span = topLevelValueAt(data, keys.modelAt);
  if (!span) return undefined;
  // model stands before the usage that closes the event, so the rewrite leaves that ending in place.
  const rewritten = replaceSpan(data, span, encodedModel);
  // Only a string value ends where it ends whatever follows (`7` then `null` would scan as one value `7null`).
  const opening = data.charCodeAt(span.start) === QUOTE ? openingOf(data, span, encodedModel) : undefined;
  return { text: hideUsage && trailingUsageNull ? `${rewritten.slice(0, -USAGE_NULL_END.length)}}` : rewritten, opening };
}

/** Copied out of the event, so that the opening does not keep the provider's whole read alive for the rest of the stream. */
function openingOf(data: string, span: Span, encodedModel: string): CommonOpening {
  const text = Buffer.from(data.slice(0, span.end)).toString();
  return { text, line: DATA_FIELD + text, rewritten: text.slice(0, span.start) + encodedModel, multiline: text.includes('\n') };
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

/**
 * A provider's in-stream error (OpenRouter sends one after the 200), from its `error` value, and the HTTP status it
 * stands for: a numeric code in the HTTP range (OpenRouter's 502, 429), else 500.
 */
function streamErrorFields(errorText: string): { fields: StreamErrorFields; status: number } {
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
  const status = Number(fields.providerCode);
  return { fields, status: Number.isInteger(status) && status >= 400 && status <= 599 ? status : 500 };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  const value = parseJson(text);
  return isObject(value) ? value : undefined;
}
