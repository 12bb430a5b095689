// Edits of a JSON object's top level made in its text: the rest, spacing, key order and numbers included, stays as
// written. Where the keys are found: json-top-level.ts.
import { skipSpace, TopLevelEntry, type Span, type TopLevelScan } from './json-top-level.js';

/** Replaces the text in `span` with `json`, an already encoded JSON value. */
export function replaceSpan(text: string, span: Span, json: string): string {
  return text.slice(0, span.start) + json + text.slice(span.end);
}

/**
 * `text` with top-level `key` set to the JSON string `value` in every place it appears (a duplicated key is
 * rewritten everywhere, whichever one a reader keeps), or added first when absent; undefined when `text` is not a
 * JSON object (as scanTopLevel). The model of every answer and native request is rewritten so: no scan, and each
 * key compared in place (a scan's arrays, spans and keys were ~2 KB of each non-streamed answer).
 */
export function setTopLevelString(text: string, key: string, value: string): string | undefined {
  return setTopLevel(text, [{ key, json: JSON.stringify(value) }]);
}

/** A top-level key setTopLevel sets: to encoded JSON, or to what `json` makes of each occurrence's text (undefined when absent). */
export interface TopLevelSet {
  readonly key: string;
  /** A function must be pure: it is called per occurrence, then once more for an absent key, as the walk finds them. */
  readonly json: string | ((current: string | undefined) => string);
}

/**
 * What editTopLevel gives with a scan for edits that only set (distinct keys, 1 to 31, in `sets`' order), in one
 * walk that builds no scan: each key set in every place it appears, the absent ones added first. Undefined when
 * `text` is not a JSON object (as scanTopLevel). Keys are compared in place unless `visit` is given: it sees each
 * entry's key, as JSON.parse reads it, before the rest of the text is checked (every chat request to an
 * OpenAI-compatible provider is edited so, its gated fields checked on the way: ~1 KB less than a scan).
 */
export function setTopLevel(text: string, sets: readonly TopLevelSet[], visit?: (key: string, entry: TopLevelEntry) => void): string | undefined {
  // Without a set, no key would be read, so none checked.
  if (sets.length < 1 || sets.length > 31) throw new RangeError('setTopLevel takes 1 to 31 keys');
  const open = skipSpace(text, 0);
  if (text.charCodeAt(open) !== 0x7b /* { */) return undefined;
  const bodyStart = open + 1;
  let i = skipSpace(text, bodyStart);
  const empty = text.charCodeAt(i) === 0x7d; /* } */
  let out = '';
  let copied = bodyStart;
  let found = 0; // bit s: sets[s]'s key appeared
  const entry = new TopLevelEntry();
  while (!empty) {
    if (!entry.read(text, i)) return undefined;
    let key: string | undefined;
    if (visit !== undefined) {
      key = entry.key(text);
      if (key === undefined) return undefined;
      visit(key, entry);
    }
    for (let s = 0; s < sets.length; s++) {
      const set = sets[s]!;
      const matches = key === undefined ? entry.keyIs(text, set.key) : key === set.key;
      if (matches === undefined) return undefined;
      if (!matches) continue;
      out += text.slice(copied, entry.valueStart) + (typeof set.json === 'string' ? set.json : set.json(text.slice(entry.valueStart, entry.valueEnd)));
      copied = entry.valueEnd;
      found |= 1 << s;
      break;
    }
    i = skipSpace(text, entry.valueEnd);
    const separator = text.charCodeAt(i);
    if (separator === 0x7d /* } */) break;
    if (separator !== 0x2c /* , */) return undefined;
    i = skipSpace(text, i + 1);
  }
  if (skipSpace(text, i + 1) !== text.length) return undefined;
  let added = '';
  for (let s = 0; s < sets.length; s++) {
    if ((found & (1 << s)) !== 0) continue;
    const { key, json } = sets[s]!;
    added += `${added === '' ? '' : ','}${JSON.stringify(key)}:${typeof json === 'string' ? json : json(undefined)}`;
  }
  if (added === '') return copied === bodyStart ? text : text.slice(0, bodyStart) + out + text.slice(copied);
  return text.slice(0, bodyStart) + added + (empty ? '' : ',') + out + text.slice(copied);
}

/**
 * One edit of a top-level key: encoded JSON (set every occurrence, or add the key first when absent),
 * undefined (remove every occurrence), or a function giving each occurrence's new JSON from its current
 * text (called once with undefined when the key is absent: its result, if any, is added first).
 */
export type TopLevelEdit = string | undefined | ((current: string | undefined) => string | undefined);

/**
 * Edits the top level of a JSON object text in one pass. Everything not edited, spacing included,
 * stays as it was.
 */
export function editTopLevel(text: string, scan: TopLevelScan, edits: ReadonlyMap<string, TopLevelEdit>): string {
  const added: string[] = [];
  for (const [key, edit] of edits) {
    if (scan.keys.includes(key)) continue;
    const json = typeof edit === 'function' ? edit(undefined) : edit;
    if (json !== undefined) added.push(`${JSON.stringify(key)}:${json}`);
  }
  // Each occurrence's new value, in order (a function edit is called once per occurrence).
  const editedAt: number[] = [];
  const results: (string | undefined)[] = [];
  let removes = false;
  for (let i = 0; i < scan.keys.length; i++) {
    const key = scan.keys[i]!;
    if (!edits.has(key)) continue;
    const edit = edits.get(key);
    const value = scan.values[i]!;
    const json = typeof edit === 'function' ? edit(text.slice(value.start, value.end)) : edit;
    editedAt.push(i);
    results.push(json);
    if (json === undefined) removes = true;
  }
  return removes ? rebuildWithout(text, scan, added, editedAt, results) : spliceValues(text, scan, added, editedAt, results as string[]);
}

/** No entry removed (the common edit: a value replaced): the new values are spliced in, the rest copied in runs. */
function spliceValues(text: string, scan: TopLevelScan, added: readonly string[], editedAt: readonly number[], results: readonly string[]): string {
  let out = '';
  let copied = 0;
  if (added.length > 0) {
    out = text.slice(0, scan.bodyStart) + added.join(',') + (scan.keys.length > 0 ? ',' : '');
    copied = scan.bodyStart;
  }
  for (let k = 0; k < editedAt.length; k++) {
    const value = scan.values[editedAt[k]!]!;
    out += text.slice(copied, value.start) + results[k]!;
    copied = value.end;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** Some entry removed: the entries are written again one by one, each with the separator it needs. */
function rebuildWithout(text: string, scan: TopLevelScan, added: readonly string[], editedAt: readonly number[], results: readonly (string | undefined)[]): string {
  let out = text.slice(0, scan.bodyStart) + added.join(',');
  let wrote = added.length > 0;
  let k = 0;
  for (let i = 0; i < scan.keys.length; i++) {
    const edited = editedAt[k] === i;
    const json = edited ? results[k++] : undefined;
    if (edited && json === undefined) continue;
    const value = scan.values[i]!;
    // What stood before this entry: the space after `{`, or the comma and space after the previous entry.
    const before = text.slice(i === 0 ? scan.bodyStart : scan.values[i - 1]!.end, scan.keyStarts[i]);
    const hasComma = before.includes(',');
    out += wrote ? (hasComma ? before : `,${before}`) : hasComma ? before.replace(',', '') : before;
    out += text.slice(scan.keyStarts[i], value.start) + (edited ? json : text.slice(value.start, value.end));
    wrote = true;
  }
  const last = scan.values.at(-1);
  return out + text.slice(last ? last.end : scan.bodyStart);
}
