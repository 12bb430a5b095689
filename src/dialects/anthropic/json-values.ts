import { lastValue, scanArrayAt, scanTopLevel, skipSpace, type Span } from '../../wire/json-top-level.js';

export { isObject, parseJson } from '../json-values.js';

export function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * The text of top-level `key` in the JSON object `text`, as written; of duplicates the last, the one
 * JSON.parse keeps (keys decoded as it decodes them). Undefined when absent or `text` is not an object.
 */
export function rawValueOf(text: string, key: string): string | undefined {
  const scan = scanTopLevel(text);
  const span = scan && lastValue(scan, key);
  return span && text.slice(span.start, span.end);
}

/** The span of each element of the JSON array `text`, in order; undefined when it is not an array. */
export function arrayElementSpans(text: string): Span[] | undefined {
  return scanArrayAt(text, skipSpace(text, 0));
}
