import { readFileSync } from 'node:fs';
import t from 'tap';
import type { RouteTables } from '../../../src/generated/types/route-tables.js';
import type { Change } from '../../../scripts/review/change.js';
import { reviewChange } from '../../../scripts/review/classify.js';
import { CLASSIFIED_FIELDS, resolveSchema, TABLES_SCHEMA } from '../../../scripts/review/fields.js';
import { compileRoutes } from '../../../scripts/routes/compile-routes.js';

const NOW = Date.parse('2026-11-26T00:00:00Z');
const everyField = readFileSync(new URL('../../fixtures/review/every-field.yaml', import.meta.url), 'utf8');

function compiled(text: string): { tables: RouteTables; lineOf: (path: readonly (string | number)[]) => number } {
  const result = compileRoutes(text);
  if (!result.ok) throw new Error(result.problems.map((problem) => `${problem.line}:${problem.col}: ${problem.message}`).join('\n'));
  return { tables: result.tables, lineOf: (path) => result.locate(path, 'key').line };
}

function changesOf(old: RouteTables, next: RouteTables, lineOf: (path: readonly (string | number)[]) => number = () => 1): Change[] {
  const review = reviewChange(old, next, lineOf, NOW);
  return [...review.breaking, ...review.behaviour, ...review.safe];
}

/** Every field the schema of the compiled tables describes, as a pattern (`*` for a map's keys); arrays are one field. */
function schemaFields(): { leaves: string[]; entries: string[] } {
  const leaves: string[] = [];
  const entries: string[] = [];
  const walk = (pattern: string, schema: unknown) => {
    const node = resolveSchema(schema as never);
    const properties = node?.properties;
    const map = typeof node?.additionalProperties === 'object' ? node.additionalProperties : undefined;
    if (!properties && !map) return void leaves.push(pattern);
    for (const [key, child] of Object.entries(properties ?? {})) walk(pattern === '' ? key : `${pattern}.${key}`, child);
    if (map) {
      entries.push(`${pattern}.*`);
      walk(`${pattern}.*`, map);
    }
  };
  walk('', TABLES_SCHEMA);
  return { leaves, entries };
}

/** The registered pattern that classifies `pattern`: itself or its nearest ancestor (a whole value, like `breaker`). */
function classification(pattern: string): string | undefined {
  for (let at = pattern; at !== ''; at = at.includes('.') ? at.slice(0, at.lastIndexOf('.')) : '') {
    if (Object.hasOwn(CLASSIFIED_FIELDS, at) && !['providers', 'models', 'callers'].includes(at)) return CLASSIFIED_FIELDS[at];
  }
  return undefined;
}

t.test('every field of the compiled tables is classified (schemas/route-tables.schema.json enumerated)', async (t) => {
  const { leaves, entries } = schemaFields();
  t.ok(leaves.length > 40, `${leaves.length} fields`);
  const unclassified = [...leaves, ...entries].filter((pattern) => classification(pattern) === undefined);
  t.strictSame(unclassified, [], 'a field the tables gained needs a classifier (scripts/review/fields.ts), or a reason it is not compared');
  const known = new Set([...leaves, ...entries, 'providers', 'models', 'callers']);
  for (const pattern of Object.keys(CLASSIFIED_FIELDS)) t.ok(known.has(pattern) || leaves.some((leaf) => leaf.startsWith(`${pattern}.`)), `${pattern} is a field of the tables`);
});

/** The first path in `tables` matching `pattern` with a value there. */
function firstPath(tables: unknown, pattern: string): string[] | undefined {
  const find = (node: unknown, segments: string[], path: string[]): string[] | undefined => {
    if (segments.length === 0) return node === undefined ? undefined : path;
    if (node === null || typeof node !== 'object') return undefined;
    const [head, ...rest] = segments;
    const keys = head === '*' ? Object.keys(node) : [head!];
    for (const key of keys) {
      const found = find((node as Record<string, unknown>)[key], rest, [...path, key]);
      if (found) return found;
    }
    return undefined;
  };
  return find(tables, pattern.split('.'), []);
}

/** Another value of the same shape: numbers + 1, strings + "x", booleans flipped, lists grown, objects by their first field. */
function changed(value: unknown): unknown {
  if (typeof value === 'number') return value + 1;
  if (typeof value === 'string') return `${value}x`;
  if (typeof value === 'boolean') return !value;
  if (Array.isArray(value)) return value.length > 0 && typeof value[0] === 'object' ? [changed(value[0]), ...value.slice(1)] : [...value, 'x'];
  if (value !== null && typeof value === 'object') {
    const [key, inner] = Object.entries(value)[0]!;
    return { ...value, [key]: changed(inner) };
  }
  return 'x';
}

function withChange(tables: RouteTables, path: string[], edit: 'change' | 'delete'): RouteTables {
  const copy = structuredClone(tables) as unknown as Record<string, unknown>;
  const parent = path.slice(0, -1).reduce((node, key) => (node as Record<string, unknown>)[key], copy as unknown) as Record<string, unknown>;
  const last = path.at(-1)!;
  if (edit === 'delete') delete parent[last];
  else parent[last] = changed(parent[last]);
  return copy as unknown as RouteTables;
}

t.test('a change to each field is reported by the classifier named for it (or, for a field not compared, not at all)', async (t) => {
  const { tables } = compiled(everyField);
  const { leaves, entries } = schemaFields();
  for (const pattern of [...leaves, ...entries]) {
    const path = firstPath(tables, pattern);
    if (!path) {
      t.fail(`${pattern}: every-field.yaml sets no instance of it`);
      continue;
    }
    const entry = pattern.endsWith('.*');
    const changes = changesOf(tables, withChange(tables, path, entry ? 'delete' : 'change'));
    const rule = CLASSIFIED_FIELDS[pattern] ?? classification(pattern)!;
    if (rule.startsWith('not compared:')) {
      t.strictSame(changes, [], `${pattern}: ${rule}`);
      continue;
    }
    t.ok(changes.length > 0, `${path.join('.')} changed: reported`);
    const kinds = [...new Set(changes.map((change) => change.kind))];
    t.strictSame(kinds.filter((kind) => !rule.includes(kind) && !(entry && kind.startsWith('caller_'))), [], `${pattern}: reported as ${kinds.join(', ')} (registered: ${rule})`);
  }
});

t.test('a difference no classifier claims is a behaviour change naming the field, never dropped', async (t) => {
  const { tables } = compiled(everyField);
  const next = structuredClone(tables) as unknown as { models: Record<string, Record<string, unknown>>; providers: Record<string, Record<string, unknown>> } & Record<string, unknown>;
  next.models['alpha/big']!['newKnob'] = 2;
  next.providers['gem']!['zone'] = 'eu';
  next['topLevelKnob'] = true;
  const review = reviewChange(tables, next as unknown as RouteTables, (path) => (path[0] === 'models' ? 23 : 1), NOW);
  t.strictSame(review.breaking, []);
  t.strictSame(review.safe, []);
  t.strictSame(review.behaviour, [
    { severity: 'behaviour', kind: 'field_changed', provider: 'gem', field: 'providers.gem.zone', before: null, after: 'eu', line: 1 },
    { severity: 'behaviour', kind: 'field_changed', model: 'alpha/big', field: 'models.alpha/big.newKnob', before: null, after: 2, line: 23 },
    { severity: 'behaviour', kind: 'field_changed', field: 'topLevelKnob', before: null, after: true, line: 1 },
  ]);
});

t.test('api, thinking_budget and reasoning_levels changes are reported (they were not at all)', async (t) => {
  const old = compiled(everyField);
  const review = (from: string, to: string) => {
    const next = compiled(everyField.replace(from, to));
    const result = reviewChange(old.tables, next.tables, next.lineOf, NOW);
    return { breaking: result.breaking.map(pick), behaviour: result.behaviour.map(pick), safe: result.safe.map(pick) };
  };
  const pick = ({ kind, model, before, after, line }: Change) => ({ kind, model, before, after, line });
  t.strictSame(review('    api: responses\n', ''), { breaking: [], behaviour: [{ kind: 'api_changed', model: 'alpha/big', before: 'responses', after: 'chat', line: 24 }], safe: [] });
  t.strictSame(review('thinking_budget: { min: 512, max: 24576 }', 'thinking_budget: { min: 1024, max: 24576 }'), {
    breaking: [{ kind: 'thinking_budget_narrowed', model: 'gem/flash', before: { min: 512, max: 24576 }, after: { min: 1024, max: 24576 }, line: 33 }],
    behaviour: [],
    safe: [],
  });
  t.strictSame(review('thinking_budget: { min: 512, max: 24576 }', 'thinking_budget: { min: 0, max: 32768 }')['behaviour'], [
    { kind: 'thinking_changed', model: 'gem/flash', before: { min: 512, max: 24576 }, after: { min: 0, max: 32768 }, line: 33 },
  ]);
  t.strictSame(review('reasoning_levels: [low, high]', 'reasoning_levels: [high]'), {
    breaking: [],
    behaviour: [{ kind: 'thinking_changed', model: 'gem/pro', before: ['low', 'high'], after: ['high'], line: 34 }],
    safe: [],
  });
  // Another reasoning mode carries its range or levels in the one item that reports it.
  t.strictSame(review('reasoning: levels, reasoning_levels: [low, high]', 'reasoning: budget')['behaviour'], [
    { kind: 'capability_changed', model: 'gem/pro', before: { reasoning: 'levels', reasoningLevels: ['low', 'high'] }, after: { reasoning: 'budget', thinkingBudget: { min: 512, max: 24576 } }, line: 34 },
  ]);
});
