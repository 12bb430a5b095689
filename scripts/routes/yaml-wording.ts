import { isMap, isPair, isScalar, visit, type Document, type LineCounter } from 'yaml';
import type { LoadedRoutes } from './load-routes.js';
import type { Problem } from './problem.js';

/**
 * The YAML parser's complaints that people meet most, in words that name the line they typed and what to do:
 * a key indented to a column no key above it uses, and a key given twice (with where it was first).
 */

/** A key that lines up with no map above it (yaml's BAD_INDENT): the columns it could mean, with their lines. */
export function badIndentMessage(text: string, line: number): string | null {
  const lines = text.split(/\r?\n/);
  const typed = lines[line - 1];
  if (typed === undefined) return null;
  const indent = indentOf(typed);
  const key = keyOf(typed);
  // The columns still open at this line: the previous key's, then each shallower ancestor's, nearest first.
  const open: { indent: number; line: number; key: string }[] = [];
  for (let i = line - 2; i >= 0; i--) {
    const text = lines[i]!;
    if (text.trim() === '' || text.trimStart().startsWith('#')) continue;
    const depth = indentOf(text);
    if (open.length === 0 || depth < open.at(-1)!.indent) open.push({ indent: depth, line: i + 1, key: keyOf(text) });
    if (depth === 0) break;
  }
  const deeper = open.filter((level) => level.indent > indent).at(-1);
  const shallower = open.find((level) => level.indent < indent);
  if (!deeper && !shallower) return null;
  const choice = (level: { indent: number; line: number; key: string }) => `${level.indent} spaces to line up with "${level.key}" (line ${level.line})`;
  const choices = [deeper, shallower].filter((level) => level !== undefined).map(choice);
  return `"${key}" is indented ${indent} space${indent === 1 ? "" : "s"}, a column no key above it uses, so YAML cannot tell which map it belongs to; indent it ${choices.join(', or ')}`;
}

/**
 * Keys YAML allows but a routes file must not have, in one pass over every map (a Map per map, so linear): a key
 * given twice (JavaScript keeps the last silently; named with where it was first), and `__proto__`, which a plain
 * object does not keep as a key (assigned, it would replace the object's prototype and the entry would vanish).
 * Keys compare as the compiled tables see them (`429` and `"429"` are one key).
 */
export function keyProblems(doc: Document, lineCounter: LineCounter): { key: string; offset: number; message: string }[] {
  const found: { key: string; offset: number; message: string }[] = [];
  const lineOf = (offset: number) => lineCounter.linePos(offset).line;
  visit(doc, {
    Map(_, map) {
      if (!isMap(map)) return;
      const seen = new Map<string, number>();
      for (const pair of map.items) {
        if (!isPair(pair) || !isScalar(pair.key) || !pair.key.range) continue;
        const key = String(pair.key.value);
        const offset = pair.key.range[0];
        const first = seen.get(key);
        if (key === '__proto__') found.push({ key, offset, message: '"__proto__" cannot be a key: JavaScript reserves it (it would be dropped without a word); rename or remove it' });
        else if (first !== undefined) found.push({ key, offset, message: `duplicate key ${JSON.stringify(key)}: it is first given on line ${lineOf(first)}; keep one of the two (a key may appear once in a map)` });
        if (first === undefined) seen.set(key, offset);
      }
    },
  });
  return found;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

function keyOf(line: string): string {
  const text = line.trim().replace(/^- /, '');
  const colon = text.search(/:(\s|$)/);
  const key = colon > 0 ? text.slice(0, colon) : text;
  return key.length > 60 ? `${key.slice(0, 60)}…` : key.replace(/"/g, "'");
}

/**
 * A provider's own key (api_key_env, headers, …) dedented to the providers' column: YAML reads it as a provider
 * named `api_key_env`, and the schema would say three unhelpful things about that provider. One problem instead,
 * naming the provider it was meant for.
 */
export function dedentedProviderKeys(loaded: LoadedRoutes, providerKeys: ReadonlySet<string>): Problem[] {
  const providers = loaded.data !== null && typeof loaded.data === 'object' ? (loaded.data as Record<string, unknown>)['providers'] : undefined;
  if (providers === null || typeof providers !== 'object' || Array.isArray(providers)) return [];
  const ids = Object.keys(providers);
  return ids.flatMap((id, index) => {
    const value = (providers as Record<string, unknown>)[id];
    if (!providerKeys.has(id) || (value !== null && typeof value === 'object')) return [];
    const owner = ids.slice(0, index).reverse().find((other) => !providerKeys.has(other));
    const where = loaded.locate(['providers', id], 'key');
    const fix = owner ? `indent it to line up with the keys of provider "${owner}" (line ${loaded.locate(['providers', owner], 'key').line}), which it belongs to` : 'indent it under the provider it belongs to';
    return [{ ...where, message: `providers.${id}: "${id}" is a provider's setting, not a provider: it is indented like a provider id; ${fix}` }];
  });
}
