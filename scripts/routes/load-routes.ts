import { LineCounter, isMap, isPair, isScalar, isSeq, parseDocument, type Document, type Node } from 'yaml';
import type { Problem } from './problem.js';
import { badIndentMessage, firstOccurrences } from './yaml-wording.js';

/** A parsed routes file that can say where any path in it was written. */
export interface LoadedRoutes {
  readonly data: unknown;
  readonly problems: Problem[];
  /** Position of the value at `path`, or of its key when `at` is 'key'; the nearest existing ancestor when absent. */
  locate(path: readonly (string | number)[], at?: 'key' | 'value'): { line: number; col: number };
}

export function loadRoutes(text: string): LoadedRoutes {
  const lineCounter = new LineCounter();
  // uniqueKeys (the default) turns a duplicate key into an error with its own position.
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const duplicates = doc.errors.some((error) => error.code === 'DUPLICATE_KEY') ? firstOccurrences(doc, lineCounter) : new Map<number, { key: string; line: number }>();
  const problems: Problem[] = doc.errors.map((error) => {
    // yaml places a duplicate key's error where the previous entry ends; report at the key itself.
    const offset = error.code === 'DUPLICATE_KEY' ? firstNonSpace(text, error.pos[0]) : error.pos[0];
    const pos = lineCounter.linePos(offset);
    const duplicate = duplicates.get(offset);
    const message =
      duplicate ? `duplicate key ${JSON.stringify(duplicate.key)}: it is first given on line ${duplicate.line}; keep one of the two (a key may appear once in a map)`
      : error.code === 'BAD_INDENT' ? badIndentMessage(text, pos.line) ?? yamlMessage(error.code, error.message)
      : yamlMessage(error.code, error.message);
    return { line: pos.line, col: pos.col, message };
  });
  const positionOf = (offset: number | undefined) => {
    const pos = lineCounter.linePos(offset ?? 0);
    return { line: pos.line, col: pos.col };
  };
  return {
    // A duplicate key still leaves a usable document, so the other checks run too.
    data: doc.errors.every((error) => error.code === 'DUPLICATE_KEY') ? doc.toJS({ maxAliasCount: 100 }) : undefined,
    problems,
    locate(path, at = 'value') {
      return positionOf(findNode(doc, path, at)?.range?.[0]);
    },
  };
}

function findNode(doc: Document, path: readonly (string | number)[], at: 'key' | 'value'): Node | undefined {
  let node: unknown = doc.contents;
  let found = node as Node | undefined;
  for (const [i, segment] of path.entries()) {
    if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment];
      if (!item) return found;
      found = item as Node;
      node = item;
      continue;
    }
    if (!isMap(node)) return found;
    const pair = node.items.find((item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(segment));
    if (!pair) return found;
    const last = i === path.length - 1;
    const next = last && at === 'key' ? pair.key : pair.value ?? pair.key;
    found = next as Node;
    node = next;
  }
  return found;
}

function firstNonSpace(text: string, offset: number): number {
  const match = /\S/.exec(text.slice(offset));
  return match ? offset + match.index : offset;
}

function yamlMessage(code: string, message: string): string {
  if (code === 'DUPLICATE_KEY') return 'duplicate key: each key may appear once in a map';
  // yaml's messages end with a source excerpt after a blank line; keep the first line.
  return `YAML: ${message.split('\n')[0]}`;
}
