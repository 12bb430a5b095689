/** [start, end) of a value inside a JSON text. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** The top-level keys of a JSON object text, each with the span of its value, in order. */
export interface TopLevelScan {
  readonly keys: readonly string[];
  /** Where each key's opening quote stands. */
  readonly keyStarts: readonly number[];
  readonly values: readonly Span[];
  /** Index just after the opening brace, for inserting a key. */
  readonly bodyStart: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Finds the top-level keys of a JSON object without building it, so a single field can be rewritten
 * exactly (numbers, key order and spacing untouched) and cheaply. Returns undefined when the text is
 * not a JSON object (a key that does not decode, such as `"\x"`, included); it checks structure and keys,
 * not every literal, so callers parse first where validity matters. Iterative and linear in the text,
 * whatever its nesting.
 */
export function scanTopLevel(text: string): TopLevelScan | undefined {
  const scan = scanObjectAt(text, skipSpace(text, 0));
  return scan && skipSpace(text, scan.end) === text.length ? scan : undefined;
}

/** The span of the last `key` in a scan, the copy JSON.parse keeps; undefined when absent. */
export function lastValue(scan: TopLevelScan, key: string): Span | undefined {
  const index = scan.keys.lastIndexOf(key);
  return index < 0 ? undefined : scan.values[index];
}

/** An object found inside a larger text: its entries as scanTopLevel gives them, and the index just past its `}`. */
export interface ObjectScan extends TopLevelScan {
  readonly end: number;
}

/**
 * The entries of the JSON object whose `{` stands at `start` (its nested values are skipped, not read),
 * so a walk can descend into a kept value's parts one level at a time; undefined when none stands there.
 */
export function scanObjectAt(text: string, start: number): ObjectScan | undefined {
  if (text.charCodeAt(start) !== 0x7b /* { */) return undefined;
  const bodyStart = start + 1;
  const keys: string[] = [];
  const keyStarts: number[] = [];
  const values: Span[] = [];
  let i = skipSpace(text, bodyStart);
  if (text.charCodeAt(i) === 0x7d /* } */) return { keys, keyStarts, values, bodyStart, end: i + 1 };
  const entry = new TopLevelEntry();
  for (;;) {
    const key = entry.read(text, i) ? entry.key(text) : undefined;
    if (key === undefined) return undefined;
    keys.push(key);
    keyStarts.push(i);
    values.push({ start: entry.valueStart, end: entry.valueEnd });
    i = skipSpace(text, entry.valueEnd);
    const separator = text.charCodeAt(i);
    if (separator === 0x7d /* } */) return { keys, keyStarts, values, bodyStart, end: i + 1 };
    if (separator !== 0x2c /* , */) return undefined;
    i = skipSpace(text, i + 1);
  }
}

/** The spans of the items of the JSON array whose `[` stands at `start`, in order; undefined when none stands there. */
export function scanArrayAt(text: string, start: number): Span[] | undefined {
  if (text.charCodeAt(start) !== 0x5b /* [ */) return undefined;
  const items: Span[] = [];
  let i = skipSpace(text, start + 1);
  if (text.charCodeAt(i) === 0x5d /* ] */) return items;
  for (;;) {
    const end = valueEnd(text, i);
    if (end < 0) return undefined;
    items.push({ start: i, end });
    i = skipSpace(text, end);
    const separator = text.charCodeAt(i);
    if (separator === 0x5d /* ] */) return items;
    if (separator !== 0x2c /* , */) return undefined;
    i = skipSpace(text, i + 1);
  }
}

/**
 * The span of the value of the top-level key whose opening quote is at `keyAt`, walking only the
 * entries before it; undefined when no top-level key starts there (it is nested, or inside a string).
 */
export function topLevelValueAt(text: string, keyAt: number): Span | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== 0x7b /* { */) return undefined;
  i = skipSpace(text, i + 1);
  const entry = new TopLevelEntry();
  while (i <= keyAt) {
    if (!entry.read(text, i) || entry.key(text) === undefined) return undefined;
    if (i === keyAt) return { start: entry.valueStart, end: entry.valueEnd };
    i = skipSpace(text, entry.valueEnd);
    if (text.charCodeAt(i) !== 0x2c /* , */) return undefined;
    i = skipSpace(text, i + 1);
  }
  return undefined;
}

/** One `"key": value` entry at a time, with nothing allocated per entry: where its key and its value stand. */
export class TopLevelEntry {
  /** The key's opening quote, and just past its closing one. */
  keyStart = 0;
  keyEnd = 0;
  valueStart = 0;
  valueEnd = 0;

  /** Reads the entry whose key opens at `i`; false when none does. */
  read(text: string, i: number): boolean {
    if (text.charCodeAt(i) !== QUOTE) return false;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) return false;
    const colon = skipSpace(text, keyEnd);
    if (text.charCodeAt(colon) !== 0x3a /* : */) return false;
    const start = skipSpace(text, colon + 1);
    const end = valueEnd(text, start);
    if (end < 0) return false;
    this.keyStart = i;
    this.keyEnd = keyEnd;
    this.valueStart = start;
    this.valueEnd = end;
    return true;
  }

  /** The key as JSON.parse reads it; undefined when an escape in it is not JSON. */
  key(text: string): string | undefined {
    const raw = text.slice(this.keyStart + 1, this.keyEnd - 1);
    return raw.includes('\\') ? decodeKey(raw) : raw;
  }

  /** Whether the key reads as `key`, compared in place unless it holds an escape; undefined as key() gives it. */
  keyIs(text: string, key: string): boolean | undefined {
    const from = this.keyStart + 1;
    const to = this.keyEnd - 1;
    for (let k = from; k < to; k++) {
      if (text.charCodeAt(k) !== BACKSLASH) continue;
      const decoded = decodeKey(text.slice(from, to));
      return decoded === undefined ? undefined : decoded === key;
    }
    return to - from === key.length && text.startsWith(key, from);
  }
}

/** An escaped key as JSON.parse reads it (`mod\u0065l` is `model`); undefined when an escape is not JSON. */
function decodeKey(rawKey: string): string | undefined {
  try {
    return JSON.parse(`"${rawKey}"`) as string;
  } catch {
    return undefined;
  }
}

export function skipSpace(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

/** Index just past the closing quote of the string opening at `start`, or -1. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const quote = text.indexOf('"', i);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    i = quote + 1;
  }
}

/** Index just past the value starting at `start`, or -1. */
function valueEnd(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === QUOTE) return stringEnd(text, start);
  if (first === 0x7b || first === 0x5b /* { [ */) {
    let depth = 0;
    let i = start;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        i = stringEnd(text, i);
        if (i < 0) return -1;
        continue;
      }
      if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return -1;
  }
  let i = start;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x2c || c === 0x7d || c === 0x5d || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) break;
    i++;
  }
  return i === start ? -1 : i;
}
