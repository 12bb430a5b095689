import type { Usage } from '../../generated/types/usage.js';
import { lastValue, scanTopLevel, type Span, type TopLevelScan } from '../../wire/json-top-level.js';
import { editTopLevel } from '../../wire/json-top-level-edit.js';
import { SSE_DONE, sseData, sseError } from '../../wire/sse-format.js';
import type { FastLane } from '../../wire/sse-parser.js';
import type { AnswerDescription, StreamContext, StreamReaderContext, StreamStep, StreamTranslator } from '../dialect.js';
import { isObject, parseJson } from '../json-values.js';
import { providerStreamErrorBody, type StreamErrorFields } from '../stream-error.js';
import { countedOrUndefined, DATA_FIELD, noteFinishReasons, restOfCommonChunk, restScan, rewriteCommonChunk, type CommonOpening } from './common-chunk.js';

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
  // The span's description (docs/observability.md): id and model of the first chunk (one parse per stream), finish
  // reasons as they come. Only a traced stream is described: else nothing is parsed or noted for it.
  const describing = context.described !== false;
  let first: { id: unknown; model: unknown } | undefined;
  const finishReasons: string[] = [];
  const chunkScan = restScan(describing);
  return {
    describe: (): AnswerDescription => ({ id: first?.id ?? null, model: first?.model ?? null, finishReasons }),
    translate(message) {
      if (message.kind === 'comment') return { frames: `: ${message.text}\n\n` };
      const { data } = message;
      if (data === '[DONE]') return { frames: SSE_DONE, end: 'done' };
      if (opening !== undefined && data.slice(0, opening.text.length) === opening.text) {
        chunkScan.chars = opening.textChars;
        const rest = restOfCommonChunk(data, opening.text.length, data.length, hideUsage, chunkScan);
        if (rest !== undefined) {
          if (opening.multiline || rest.includes('\n')) return { frames: sseData(opening.rewritten + rest) };
          // Built in one go: sseData would flatten the joined string only to look for a line break.
          return { frames: `${opening.framed}${rest}\n\n`, textChars: countedOrUndefined(chunkScan.chars) };
        }
      }
      // Not a common chunk: the first, one with a finish reason in a described stream, usage, an error.
      if (describing) {
        first ??= idAndModel(data);
        noteFinishReasons(data, finishReasons);
      }
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
      const usageSpan = lastValue(scan, 'usage');
      const usage = usageSpan ? (parseObject(data.slice(usageSpan.start, usageSpan.end)) as Usage | undefined) : undefined;
      // The caller did not ask for usage: drop the usage-only chunk and the usage fields of the others.
      const choices = lastValue(scan, 'choices');
      if (hideUsage && usage && choices && /^\[\s*\]$/.test(data.slice(choices.start, choices.end))) return { frames: '', usage };
      const edits = new Map<string, string | undefined>([['model', encodedModel]]);
      if (hideUsage && usageSpan) edits.set('usage', undefined);
      const frames = sseData(editTopLevel(data, scan, edits));
      return usage ? { frames, usage } : { frames };
    },
    // Common chunks that open like the last one, taken straight from the parser's text: no message, no step each.
    lane: {
      take(text, at) {
        if (opening === undefined || opening.multiline) return undefined;
        const { line, framed } = opening;
        let frames = '';
        let pos = at;
        let textChars = 0;
        // (slice and compare: cheaper than startsWith with a position)
        while (text.slice(pos, pos + line.length) === line) {
          const lf = text.indexOf('\n', pos + line.length);
          // Complete, one data line, not larger than the parser allows: else the parser has it.
          if (lf < 0 || text.charCodeAt(lf + 1) !== 0x0a || lf - pos - DATA_FIELD.length > maxEventChars) break;
          chunkScan.chars = opening.textChars;
          const rest = restOfCommonChunk(text, pos + line.length, lf, hideUsage, chunkScan, true);
          if (rest === undefined) break;
          frames += framed + rest;
          textChars += chunkScan.chars;
          pos = lf + 2;
        }
        return pos === at ? undefined : { frames, end: pos, textChars: countedOrUndefined(textChars) };
      },
    },
  };
}

/** The provider's id and model of its first chunk, as it sent them. */
function idAndModel(data: string): { id: unknown; model: unknown } {
  const parsed = parseJson(data);
  return isObject(parsed) ? { id: parsed['id'], model: parsed['model'] } : { id: null, model: null };
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
