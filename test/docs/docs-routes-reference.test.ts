// docs/routes-yaml.md names every key of schemas/routes.schema.json, and names no key the schema lacks, so the
// reference cannot drift from what the compiler accepts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { REPO, codeSpans, readPage, tablesOf } from './docs-pages.js';

/** Every property name declared anywhere in a JSON Schema (under `properties`, at any depth). */
export function schemaKeys(schema: unknown): Set<string> {
  const keys = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'properties' && value !== null && typeof value === 'object') for (const name of Object.keys(value)) keys.add(name);
      walk(value);
    }
  };
  walk(schema);
  return keys;
}

/**
 * The keys a reference page documents: the key paths in the first column of its "Key" and "Field" tables
 * (`providers.<id>.endpoints[].weight`, and `.api_key_env` continuing the path before it), each segment but the
 * placeholders (`<id>`) and quoted statuses.
 */
export function documentedKeys(page: string): Set<string> {
  const keys = new Set<string>();
  for (const table of tablesOf(page)) {
    if (table.header[0] !== 'Key' && table.header[0] !== 'Field') continue;
    for (const row of table.rows) {
      for (const path of codeSpans(row[0]!)) {
        for (const segment of path.split('.')) {
          const key = segment.replace(/\[\]$/, '');
          if (key !== '' && !key.startsWith('<') && !key.startsWith('"')) keys.add(key);
        }
      }
    }
  }
  return keys;
}

t.test('the routes.yaml reference and the schema name the same keys', async (t) => {
  const schema = schemaKeys(JSON.parse(readFileSync(join(REPO, 'schemas/routes.schema.json'), 'utf8')));
  const documented = documentedKeys(readPage('docs/routes-yaml.md'));
  t.ok(schema.size >= 50, `the schema's keys were found (${schema.size})`);
  t.same([...schema].filter((key) => !documented.has(key)).sort(), [], 'in the schema but not in docs/routes-yaml.md');
  t.same([...documented].filter((key) => !schema.has(key)).sort(), [], 'in docs/routes-yaml.md but not in the schema');
});

t.test('the readers find nested keys and leave placeholders out', async (t) => {
  t.same([...schemaKeys({ properties: { a: { properties: { b: {} } } }, $defs: { C: { properties: { c: {} } } } })].sort(), ['a', 'b', 'c']);
  const page = '| Key | Meaning |\n|---|---|\n| `providers.<id>.endpoints[].weight`, `.name` | x |\n| `models."a/b"` | y |\n';
  t.same([...documentedKeys(page)].sort(), ['endpoints', 'models', 'name', 'providers', 'weight']);
});
