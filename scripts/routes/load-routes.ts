import { closeSync, openSync, readSync } from 'node:fs';
import { LineCounter, isMap, isPair, isScalar, isSeq, parseDocument, visit, type Document, type Node, type Pair, type YAMLMap } from 'yaml';
import type { Problem } from './problem.js';
import { badIndentMessage, keyProblems } from './yaml-wording.js';

/** The largest routes file the compiler reads: a roster of the largest realistic size is well under a quarter of it. */
export const MAX_ROUTES_BYTES = 1024 * 1024;
/** The most routing strings under `models:` (the largest public rosters have a few hundred). */
export const MAX_MODELS = 5000;
/** The most callers: each may use every model, so the compiled tables grow as callers × models. */
export const MAX_CALLERS = 1000;

/** A parsed routes file that can say where any path in it was written. */
export interface LoadedRoutes {
  readonly data: unknown;
  readonly problems: Problem[];
  /** Position of the value at `path`, or of its key when `at` is 'key'; the nearest existing ancestor when absent. */
  locate(path: readonly (string | number)[], at?: 'key' | 'value'): { line: number; col: number };
}

export function loadRoutes(text: string): LoadedRoutes {
  const lineCounter = new LineCounter();
  const tooLarge = sizeProblem(text);
  if (tooLarge) return { data: undefined, problems: [tooLarge], locate: () => ({ line: 1, col: 1 }) };
  // uniqueKeys: false — yaml's own check compares each key with every earlier one (quadratic in a map's size);
  // keyProblems finds duplicates (and __proto__) in one pass, with the line of the first occurrence.
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  const positionOf = (offset: number | undefined) => {
    const pos = lineCounter.linePos(offset ?? 0);
    return { line: pos.line, col: pos.col };
  };
  const problems: Problem[] = doc.errors.map((error) => {
    const pos = lineCounter.linePos(error.pos[0]);
    const message = error.code === 'BAD_INDENT' ? badIndentMessage(text, pos.line) ?? yamlMessage(error.message) : yamlMessage(error.message);
    return { line: pos.line, col: pos.col, message };
  });
  const keys = keyProblems(doc, lineCounter);
  problems.push(...keys.map(({ offset, message }) => ({ ...positionOf(offset), message })));
  const tooMany = countProblem(doc);
  if (tooMany) problems.push({ ...positionOf(tooMany.offset), message: tooMany.message });
  const index = new WeakMap<YAMLMap, Map<string, Pair>>();
  let data: unknown;
  if (doc.errors.length === 0 && !tooMany) {
    const js = aliasesExpanded(doc);
    if (js.problem) problems.push({ ...positionOf(js.problem.offset), message: js.problem.message });
    // A duplicate or refused key still leaves a usable document, so the other checks run too.
    else data = withoutProtoKeys(js.value, keys.some(({ key }) => key === '__proto__'));
  }
  return {
    data,
    problems,
    locate(path, at = 'value') {
      return positionOf(findNode(doc, path, at, index)?.range?.[0]);
    },
  };
}

/**
 * A routes file's text, read no further than one byte past MAX_ROUTES_BYTES: a larger file is refused (sizeProblem)
 * without being held whole. Throws what reading throws.
 */
export function readRoutesFile(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(MAX_ROUTES_BYTES + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length < buffer.length; length += read) read = readSync(fd, buffer, length, buffer.length - length, null);
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Past MAX_ROUTES_BYTES: one problem where the limit is crossed, and nothing parsed. */
function sizeProblem(text: string): Problem | undefined {
  if (Buffer.byteLength(text, 'utf8') <= MAX_ROUTES_BYTES) return undefined;
  const within = Buffer.from(text, 'utf8').subarray(0, MAX_ROUTES_BYTES).toString('utf8');
  const line = within.split('\n').length;
  const col = within.length - within.lastIndexOf('\n');
  const message = `the file is over ${MAX_ROUTES_BYTES.toLocaleString('en-US')} bytes (1 MiB), the most the compiler reads, and this line crosses it; nothing was checked. A routes.yaml holds at most ${MAX_MODELS.toLocaleString('en-US')} models and ${MAX_CALLERS.toLocaleString('en-US')} callers`;
  return { line, col, message };
}

/** More than MAX_MODELS routing strings or MAX_CALLERS callers: one problem at the first entry over. */
function countProblem(doc: Document): { offset: number; message: string } | undefined {
  for (const [section, most, what] of [['models', MAX_MODELS, 'routing strings'], ['callers', MAX_CALLERS, 'callers']] as const) {
    const map = isMap(doc.contents) ? doc.contents.items.find((pair) => isScalar(pair.key) && pair.key.value === section)?.value : undefined;
    if (!isMap(map) || map.items.length <= most) continue;
    const first = map.items[most]!;
    const offset = (isScalar(first.key) ? first.key.range?.[0] : undefined) ?? map.range?.[0] ?? 0;
    return { offset, message: `${section}: ${map.items.length.toLocaleString('en-US')} ${what}, over the ${most.toLocaleString('en-US')} the compiler takes; this is the first one over. Nothing else was checked` };
  }
  return undefined;
}

/** The most alias uses the document may expand to, counting what each repeats (yaml's guard against alias bombs). */
const MAX_ALIAS_COUNT = 100;

/**
 * The document as plain data, or a problem at its first alias when yaml refuses to expand the aliases (a "billion
 * laughs" file: nested aliases that would repeat a node millions of times), rather than yaml's exception.
 */
function aliasesExpanded(doc: Document): { value?: unknown; problem?: { offset: number; message: string } } {
  try {
    return { value: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) };
  } catch (error) {
    let offset = 0;
    visit(doc, {
      Alias(_key, node) {
        offset = node.range?.[0] ?? 0;
        return visit.BREAK;
      },
    });
    const why = error instanceof Error ? error.message : String(error);
    return { problem: { offset, message: `YAML: the aliases (*name) would expand past ${MAX_ALIAS_COUNT} uses counting what each repeats (${why}); write the repeated parts out or use fewer nested aliases` } };
  }
}

/** A `__proto__` key was reported; without it here the other checks say nothing more of it (and nothing assigns it). */
function withoutProtoKeys(value: unknown, any: boolean): unknown {
  const pending = any ? [value] : [];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Object.hasOwn(node, '__proto__')) delete (node as Record<string, unknown>)['__proto__'];
    for (const child of Object.values(node)) pending.push(child);
  }
  return value;
}

function findNode(doc: Document, path: readonly (string | number)[], at: 'key' | 'value', index: WeakMap<YAMLMap, Map<string, Pair>>): Node | undefined {
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
    const pair = pairsOf(node, index).get(String(segment));
    if (!pair) return found;
    const last = i === path.length - 1;
    const next = last && at === 'key' ? pair.key : pair.value ?? pair.key;
    found = next as Node;
    node = next;
  }
  return found;
}

/** A map's pairs by key, built once per map: locating every model of a large roster stays linear. The first of duplicates wins, as before. */
function pairsOf(map: YAMLMap, index: WeakMap<YAMLMap, Map<string, Pair>>): Map<string, Pair> {
  let pairs = index.get(map);
  if (!pairs) {
    pairs = new Map();
    for (const item of map.items) if (isPair(item) && isScalar(item.key) && !pairs.has(String(item.key.value))) pairs.set(String(item.key.value), item as Pair);
    index.set(map, pairs);
  }
  return pairs;
}

function yamlMessage(message: string): string {
  // yaml's messages end with a source excerpt after a blank line; keep the first line.
  return `YAML: ${message.split('\n')[0]}`;
}
