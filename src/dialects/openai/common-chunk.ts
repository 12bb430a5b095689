import { TEXT_FIELD_SOURCE } from '../../observe/usage-estimate.js';
import { topLevelValueAt, type Span } from '../../wire/json-top-level.js';
import { replaceSpan } from '../../wire/json-top-level-edit.js';

// The common chunk of an OpenAI-compatible stream (id, object, created, model, then the choices): how the first
// one is rewritten and shows the stream's opening, and how a later one opening alike is checked, counted and
// taken from its rest alone (stream.ts).

/** A span takes at most 16 finish reasons, each cut to 256 characters. */
const MAX_FINISH_REASONS = 16;
const MAX_FINISH_REASON_CHARS = 256;
const FINISH_REASON = '"finish_reason":"';
const FINISH_REASON_KEY = '"finish_reason"';
const KEYS_THAT_MATTER = /"(?:model|error|usage)"/g;
const KEY_NAMES = new Set(['model', 'error', 'usage']);
/**
 * Usage as a chunk carries it once usage is asked for: `,"usage":null` closing the event, or followed only by
 * OpenAI's padding (`stream_options.include_obfuscation`, on unless the caller turns it off), a string without
 * escapes. Anything else after it goes the full scan.
 */
const USAGE_NULL_TAIL = /,"usage":null(?:,"obfuscation":"[^"\\]*")?\}/y;
const USAGE_NULL = ',"usage":null';
/** `,"usage"`: from the comma that opens the tail to the end of its key. */
const USAGE_KEY_END = ',"usage"'.length;
export const DATA_FIELD = 'data: ';
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const LOWERCASE_A = 0x61;
const LOWERCASE_Z = 0x7a;
/** 1 for what may follow a value in JSON: a comma, a closing bracket or brace, a space. */
const ENDS_VALUE = new Uint8Array(128);
for (const char of ',}] \n\r\t') ENDS_VALUE[char.charCodeAt(0)] = 1;
/**
 * In the rest of a common chunk: a key that matters, an escape that may spell one, a finish reason, or a field
 * whose string value is answer text, as the engine's count finds it (TEXT_FIELD_SOURCE). Such values are walked to their
 * closing quote (text counted) and stepped over, not searched, since a string holds no key.
 */
const SCANNED = new RegExp(`"(?:model|error|usage)"|\\\\u00[67]|"finish_reason":"|${TEXT_FIELD_SOURCE}`, 'g');
/** A field of answer text, as the engine's count finds it. */
const TEXT_FIELD = new RegExp(TEXT_FIELD_SOURCE);
/** A `\u` escape of a lowercase letter: the only way a key can spell model, error or usage other than literally. */
const ESCAPED_LOWERCASE_LETTER = /\\u00[67]/;

/** The text of a common chunk up to the end of its model value, and the same with the routing model in it. */
export interface CommonOpening {
  readonly text: string;
  /** The opening as the data line that carries it starts. */
  readonly line: string;
  readonly rewritten: string;
  /** The frame a common chunk's rest completes: `data: ` and the rewritten opening, made once per stream, not per event. */
  readonly framed: string;
  /** The opening holds a line break (the event came as several data lines). */
  readonly multiline: boolean;
  /** The answer text in the rewritten opening: 0, or NaN (not counted) when it holds a text field (chunks of no provider we know). */
  readonly textChars: number;
}

/** What restOfCommonChunk keeps for one stream, and what it found in the chunk it last took. */
export interface RestScan {
  /** The answer text of that chunk's rest, added to what the caller set (NaN: something kept it from counting exactly). */
  chars: number;
  /** The stream is described (its span notes finish reasons). */
  readonly described: boolean;
  /** The string value it last walked. */
  readonly value: StringValueEnd;
}

export function restScan(described: boolean): RestScan {
  return { chars: 0, described, value: { close: -1, escapedLetter: false } };
}

export function countedOrUndefined(chars: number): number | undefined {
  return Number.isNaN(chars) ? undefined : chars;
}

/**
 * The rest of a chunk (from `openingEnd`, after a known opening, to `end`) as the caller gets it, or undefined
 * when the chunk is not common: the same checks as rewriteCommonChunk, on the rest alone, since the opening
 * passed them already (no escaped lowercase letter, model once and at the top level, no error, no usage).
 * Adds to `scan.chars` the answer text of the rest: exactly what answerTextChars finds in the chunk's frame (the
 * search from a key's opening quote, each value walked to its closing quote), or NaN when it cannot be sure.
 * A chunk with a finish reason is not common in a stream that is described: translate notes it (when it is
 * pulled: the lane runs ahead of the caller, over events that may come after the stream's end).
 * `framed`: `end` is followed by the frame's blank line (`\n\n`), which the rest then ends with, as one slice.
 */
export function restOfCommonChunk(text: string, openingEnd: number, end: number, hideUsage: boolean, scan: RestScan, framed = false): string | undefined {
  const pattern = SCANNED;
  // A rest that opens with a colon could make a field of the opening's last string (not JSON): left to the engine's count.
  if (text.charCodeAt(openingEnd) === COLON) scan.chars = NaN;
  // One pass from the opening's last character on, so a key spelled across the boundary (`"x"model"`) is found
  // too. A match ending past `end` is in a later event (none can span a line break but a text field's spaces,
  // and the frame has `data:` there, not a value).
  pattern.lastIndex = openingEnd - 1;
  while (pattern.test(text) && pattern.lastIndex <= end) {
    const at = pattern.lastIndex;
    const before = text.charCodeAt(at - 2);
    if (text.charCodeAt(at - 1) !== QUOTE) return undefined; // an escape that may spell a key
    if (before >= LOWERCASE_A && before <= LOWERCASE_Z) {
      // "model", "error" or "usage". Usage is common only as the usage-null tail that ends the event.
      const tail = at - USAGE_KEY_END;
      if (!isUsageNullTail(text, tail, end)) return undefined;
      if (!hideUsage) break;
      // (the tail is mostly `,"usage":null}`: its end as one constant, not one more slice)
      const after = tail + USAGE_NULL.length;
      return text.slice(openingEnd, tail) + (after === end - 1 ? (framed ? '}\n\n' : '}') : text.slice(after, framed ? end + 2 : end));
    }
    // A field and its string value's opening quote: a finish reason, else answer text.
    const { value } = scan;
    closingQuote(text, at, end, value);
    const { close } = value;
    // After a text value, anything but what may follow a value is not JSON (`"text":"a"model":…`).
    if (close < 0 || ENDS_VALUE[text.charCodeAt(close + 1)] !== 1 || spellsKey(text, at, value)) return undefined;
    let colon = at - 2;
    while (text.charCodeAt(colon) !== COLON) colon--;
    // (the n of finish_reason first: most text keys end in another letter)
    if (text.charCodeAt(colon - 2) !== 0x6e || !text.startsWith(FINISH_REASON_KEY, colon - FINISH_REASON_KEY.length)) scan.chars += close - at;
    else if (scan.described) return undefined;
    pattern.lastIndex = close + 1;
  }
  return text.slice(openingEnd, framed ? end + 2 : end);
}

/**
 * A text value (its characters from `start` to the closing quote at `close`) in which the search of a fresh translator
 * (rewriteCommonChunk) would find a key or an escape that may spell one, so that the chunk goes the way it would go in
 * a fresh translator and knowing the opening never changes an answer. That search reads no escapes: inside a value it
 * finds `\u006x` or `\u007x` after any backslash (closingQuote notes those), and a key only where the key's last
 * quote is the value's closing one (`"usage"`, `a \"usage"`), since every other quote in a value is escaped.
 */
function spellsKey(text: string, start: number, value: StringValueEnd): boolean {
  const { close } = value;
  return value.escapedLetter || (close - start >= 5 && text.charCodeAt(close - 6) === QUOTE && KEY_NAMES.has(text.slice(close - 5, close)));
}

/** Where closingQuote found the end of a string value, and whether a backslash in it is followed by `u006` or `u007`. */
interface StringValueEnd {
  close: number;
  escapedLetter: boolean;
}

/**
 * Sets `into` to the quote closing the string value whose characters start at `start` (-1 when none before `end`).
 * One walk, bounded by the value: a search with a regexp would run on past it.
 */
function closingQuote(text: string, start: number, end: number, into: StringValueEnd): void {
  into.escapedLetter = false;
  for (let at = start; at < end; at++) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      into.close = at;
      return;
    }
    if (code === BACKSLASH) {
      // The backslash, or the one it escapes, before u006/u007.
      if (escapesLetter(text, at + 1) || (text.charCodeAt(at + 1) === BACKSLASH && escapesLetter(text, at + 2))) into.escapedLetter = true;
      at++;
    }
  }
  into.close = -1;
}

/** `u006` or `u007` at `at`: after a backslash, an escape of a lowercase letter. */
function escapesLetter(text: string, at: number): boolean {
  if (text.charCodeAt(at) !== 0x75 /* u */ || text.charCodeAt(at + 1) !== 0x30 || text.charCodeAt(at + 2) !== 0x30) return false;
  const digit = text.charCodeAt(at + 3);
  return digit === 0x36 || digit === 0x37;
}

/**
 * The common chunk, rewritten without a full scan: `"model"` once and at the top level, no `"error"`
 * anywhere, and usage absent or in the usage-null tail that ends the event (USAGE_NULL_TAIL: OpenAI puts it
 * on every chunk once usage is asked for); only the entries before model are walked. Exact for every event it takes: the
 * search is for literal spellings, so an event that may spell a key with escapes (`"mod\u0065l"`) is
 * left to the full scan, which decodes keys. Undefined when the event is not such a chunk.
 */
export function rewriteCommonChunk(data: string, encodedModel: string, hideUsage: boolean): { text: string; opening: CommonOpening | undefined } | undefined {
  if (data.includes('\\u') && ESCAPED_LOWERCASE_LETTER.test(data)) return undefined;
  const keys = findKeys(data);
  if (keys.modelAt < 0 || keys.error) return undefined;
  const trailingUsageNull = keys.usageAt >= 0 && isUsageNullTail(data, keys.usageAt - 1, data.length);
  if (keys.usageAt >= 0 && !trailingUsageNull) return undefined;
  const span = topLevelValueAt(data, keys.modelAt);
  if (!span) return undefined;
  // model stands before the usage that closes the event, so the rewrite leaves that ending in place.
  const rewritten = replaceSpan(data, span, encodedModel);
  // Only a string value ends where it ends whatever follows (`7` then `null` would scan as one value `7null`).
  const opening = data.charCodeAt(span.start) === QUOTE ? openingOf(data, span, encodedModel) : undefined;
  return { text: hideUsage && trailingUsageNull ? withoutUsageNull(rewritten, data.length - keys.usageAt + 1) : rewritten, opening };
}

/** `text` without the `,"usage":null` that opens its last `tailChars` characters (the tail is as long in the rewritten text as in the event). */
function withoutUsageNull(text: string, tailChars: number): string {
  const tail = text.length - tailChars;
  return text.slice(0, tail) + text.slice(tail + USAGE_NULL.length);
}

/** The usage-null tail (USAGE_NULL_TAIL) starts at `tail` and ends the event at `end`. */
function isUsageNullTail(text: string, tail: number, end: number): boolean {
  const pattern = USAGE_NULL_TAIL;
  pattern.lastIndex = tail;
  return pattern.test(text) && pattern.lastIndex === end;
}

/** Copied out of the event, so that the opening does not keep the provider's whole read alive for the rest of the stream. */
function openingOf(data: string, span: Span, encodedModel: string): CommonOpening {
  const text = Buffer.from(data.slice(0, span.end)).toString();
  const rewritten = text.slice(0, span.start) + encodedModel;
  return { text, line: DATA_FIELD + text, rewritten, framed: DATA_FIELD + rewritten, multiline: text.includes('\n'), textChars: TEXT_FIELD.test(rewritten) ? NaN : 0 };
}

/** Where `"model"` and `"usage"` stand when each appears at most once (-1: absent or repeated), and whether `"error"` appears. */
function findKeys(data: string): { modelAt: number; usageAt: number; error: boolean } {
  const pattern = KEYS_THAT_MATTER;
  pattern.lastIndex = 0;
  let modelAt = -1;
  let usageAt = -1;
  // test, not exec: no match array per key; the key is told by its first letter (each match is 7 characters).
  while (pattern.test(data)) {
    const at = pattern.lastIndex - 7;
    const letter = data.charCodeAt(at + 1);
    if (letter === 0x65 /* e */) return { modelAt: -1, usageAt: -1, error: true };
    if (letter === 0x6d /* m */) {
      if (modelAt >= 0) return { modelAt: -1, usageAt: -1, error: false };
      modelAt = at;
    } else {
      if (usageAt >= 0) return { modelAt: -1, usageAt: -1, error: false };
      usageAt = at;
    }
  }
  return { modelAt, usageAt, error: false };
}

/** The non-null finish reasons of a chunk's choices, added to `into` (a plain-string search: most chunks have none). */
export function noteFinishReasons(text: string, into: string[]): void {
  for (let at = text.indexOf(FINISH_REASON); at >= 0 && into.length < MAX_FINISH_REASONS; at = text.indexOf(FINISH_REASON, at + 1)) {
    const start = at + FINISH_REASON.length;
    const end = text.indexOf('"', start);
    if (end < 0) return;
    into.push(text.slice(start, Math.min(end, start + MAX_FINISH_REASON_CHARS)));
  }
}
