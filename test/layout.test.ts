// The shape of src/ (README: Layout): imports run one way, from the HTTP surface down to the wire codecs, and
// no files import each other in a circle. A new folder must be given its place in LAYERS before it can import.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/** Each folder of src/ (files at its top are '.') with its depth: a file may import only from a greater depth or its own. */
const LAYERS: Readonly<Record<string, number>> = {
  '.': 0, // server, app, their configuration and the cluster primary
  endpoints: 1, // one handler per inbound wire format
  caller: 2, // the caller's side of a request: body, limits, auth, CORS, errors to the caller
  policy: 3, // named callers: key lookup, allowed models, rate limits, concurrency, spend, and their stores (memory, cluster, Redis)
  routing: 4, // route, attempts, endpoint choice, breaker, upstream call, stream relay
  dialects: 5, // provider wire formats
  trace: 5.5, // OpenTelemetry: set-up from OTEL_*, request and attempt spans, GenAI attributes and metrics
  observe: 6, // log line, token counts, cost, redaction, metrics, log format
  wire: 7, // codecs both routing and dialects use: JSON scanning and bounds, SSE, the error envelope
  generated: 8, // tables and types compiled from routes.yaml and schemas/
};
const MAX_FILES_PER_FOLDER = 15;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Relative imports of a file (static, re-exports, type-only and dynamic), resolved to .ts paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g)];
  return specifiers.map((match) => resolve(dirname(file), (match[1] ?? match[2])!.replace(/\.js$/, '.ts')));
}

function folderOf(file: string): string {
  const parts = relative(SRC, file).split('/');
  return parts.length === 1 ? '.' : parts[0]!;
}

const files = sourceFiles(SRC);
const graph = new Map(files.map((file) => [file, importsOf(file)]));

t.test('every folder of src/ has a place in the layers', async (t) => {
  const unknown = [...new Set(files.map(folderOf))].filter((folder) => !(folder in LAYERS));
  t.same(unknown, [], 'folders without a layer');
});

t.test('no file imports from a folder above its own', async (t) => {
  const upward: string[] = [];
  for (const [file, imports] of graph) {
    const from = folderOf(file);
    for (const target of imports) {
      const to = folderOf(target);
      if (to !== from && (LAYERS[to] ?? -1) <= (LAYERS[from] ?? -1)) upward.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
    }
  }
  t.same(upward, [], 'imports that run upward or sideways');
});

t.test('no import circle', async (t) => {
  const state = new Map<string, 'open' | 'done'>();
  const circles: string[] = [];
  const visit = (file: string, path: string[]): void => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      circles.push([...path.slice(path.indexOf(file)), file].map((each) => relative(SRC, each)).join(' -> '));
      return;
    }
    state.set(file, 'open');
    for (const target of graph.get(file) ?? []) visit(target, [...path, file]);
    state.set(file, 'done');
  };
  for (const file of files) visit(file, []);
  t.same(circles, [], 'import circles');
});

t.test('every import names a file that exists', async (t) => {
  const missing = [...graph].flatMap(([file, imports]) => imports.filter((target) => !graph.has(target) && folderOf(target) !== 'generated').map((target) => `${relative(SRC, file)} -> ${relative(SRC, target)}`));
  t.same(missing, []);
});

t.test(`no folder holds more than ${MAX_FILES_PER_FOLDER} files`, async (t) => {
  const counts = new Map<string, number>();
  for (const file of files) if (folderOf(file) !== 'generated') counts.set(dirname(file), (counts.get(dirname(file)) ?? 0) + 1);
  const crowded = [...counts].filter(([, count]) => count > MAX_FILES_PER_FOLDER).map(([dir, count]) => `${relative(SRC, dir) || '.'}: ${count}`);
  t.same(crowded, []);
});
