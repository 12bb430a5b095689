// The shape of src/ (README: Layout): imports run one way, from the HTTP surface down to the wire codecs, and
// no files import each other in a circle. A new folder must be given its place in LAYERS before it can import.
// The shape of test/: it mirrors src/ and scripts/, a test file under the folder of what it tests (below).
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const TEST = dirname(fileURLToPath(import.meta.url));
const SRC = resolve(TEST, '../src');
const SCRIPTS = resolve(TEST, '../scripts');

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

// test/: test/<folder>/ for each folder of src/ (test/app/ for the files at its top) and of scripts/, test/process/
// for the tests that run whole gateway processes, test/clients/ for those whose subject is a real SDK client,
// test/docs/ and test/deploy/ for the repository's other parts; helpers beside the tests they serve.
const SPECIAL = ['process', 'clients', 'docs', 'deploy'];
const SDKS = ['openai', '@anthropic-ai/sdk', '@google/genai', 'ai', '@ai-sdk/openai', '@aws-sdk/client-bedrock-runtime'];
/** A gateway process: dist/server.js or test/process/gateway-child.ts, through the helpers that start them. */
const RUNS_A_GATEWAY_PROCESS = /server-process\.js'|gateway-child\.ts'|cluster-gateway\.mjs'/;

function folders(root: string, prefix = ''): string[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== 'generated')
    .flatMap((entry) => [prefix + entry.name, ...folders(join(root, entry.name), `${prefix}${entry.name}/`)]);
}

function testTree(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : testTree(path);
    return /\.(ts|mjs)$/.test(entry.name) ? [path] : [];
  });
}

const testFiles = testTree(TEST).filter((file) => file.endsWith('.test.ts') && file !== fileURLToPath(import.meta.url));
const helperFiles = testTree(TEST).filter((file) => !file.endsWith('.test.ts'));
/** test/routing/x.test.ts → 'routing'; test/app/… → 'app'. */
const testFolderOf = (file: string) => relative(TEST, dirname(file));
const PLACES = new Set([...folders(SRC), 'app', 'scripts', ...folders(SCRIPTS).map((folder) => `scripts/${folder}`), ...SPECIAL]);

/** Value imports (not `import type`) of a file, as written. */
function valueImportsOf(text: string): string[] {
  return [...text.matchAll(/(?:^|\n)\s*import\s+(?!type\b)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((match) => (match[1] ?? match[2])!);
}

t.test('every test file lives in a folder that mirrors src/ or scripts/, or in process/, clients/, docs/ or deploy/', async (t) => {
  const misplaced = testFiles.filter((file) => !PLACES.has(testFolderOf(file))).map((file) => relative(TEST, file));
  t.same(misplaced, [], 'test files outside the mirrored folders (test/layout.test.ts alone stays at the top)');
});

t.test('the tests that run a gateway process are those in test/process/', async (t) => {
  const running = new Set(testFiles.filter((file) => RUNS_A_GATEWAY_PROCESS.test(readFileSync(file, 'utf8'))));
  t.same([...running].filter((file) => testFolderOf(file) !== 'process').map((file) => relative(TEST, file)), [], 'run a gateway process outside test/process/');
  t.same(testFiles.filter((file) => testFolderOf(file) === 'process' && !running.has(file)).map((file) => relative(TEST, file)), [], 'in test/process/ without a gateway process');
});

t.test('the tests in test/clients/ drive a real SDK client', async (t) => {
  const without = testFiles.filter((file) => testFolderOf(file) === 'clients' && !valueImportsOf(readFileSync(file, 'utf8')).some((name) => SDKS.includes(name)));
  t.same(without.map((file) => relative(TEST, file)), []);
});

t.test('a test under a folder of src/ imports nothing from the layers above that folder', async (t) => {
  const astray: string[] = [];
  for (const file of testFiles) {
    const folder = testFolderOf(file);
    const own = folder === 'app' ? '.' : folder.split('/')[0]!;
    if (!(own in LAYERS)) continue;
    const above = valueImportsOf(readFileSync(file, 'utf8'))
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => resolve(dirname(file), specifier))
      .filter((target) => !relative(SRC, target).startsWith('..'))
      .map((target) => folderOf(target))
      .filter((each) => (LAYERS[each] ?? 99) < LAYERS[own]!);
    if (above.length > 0) astray.push(`${relative(TEST, file)} imports from src/${above[0]}: it tests that folder, not ${folder}/`);
  }
  t.same(astray, []);
});

t.test('a test named after a source file lives in that file\'s folder', async (t) => {
  // Each source file's name with its test folder; a name that several files share says nothing.
  const homes = [
    ...sourceFiles(SRC).filter((file) => folderOf(file) !== 'generated').map((file) => [basename(file, '.ts'), relative(SRC, dirname(file)) || 'app'] as const),
    ...sourceFiles(SCRIPTS).map((file) => [basename(file, '.ts'), join('scripts', relative(SCRIPTS, dirname(file)))] as const),
  ];
  const sources = new Map(homes.filter(([name]) => homes.filter(([other]) => other === name).length === 1));
  const astray = testFiles
    .filter((file) => !SPECIAL.includes(testFolderOf(file).split('/')[0]!))
    .map((file) => ({ file, home: sources.get(basename(file, '.test.ts')) }))
    .filter(({ file, home }) => home !== undefined && home !== testFolderOf(file))
    .map(({ file, home }) => `${relative(TEST, file)} belongs in test/${home}/`);
  t.same(astray, []);
});

t.test('helpers live beside the tests they serve: test/helpers/ holds those that several folders share', async (t) => {
  const users = new Map<string, Set<string>>(helperFiles.map((helper) => [helper, new Set()]));
  // A helper tap preloads into every test file (package.json's tap `node-arg`) serves them all.
  const nodeArgs = (JSON.parse(readFileSync(resolve(TEST, '../package.json'), 'utf8')) as { tap: { 'node-arg': string[] } }).tap['node-arg'];
  for (const arg of nodeArgs) users.get(resolve(TEST, '..', arg.replace(/^--import=/, '')))?.add('helpers');
  for (const file of [...testFiles, ...helperFiles]) {
    const text = readFileSync(file, 'utf8');
    for (const helper of helperFiles) {
      const name = relative(dirname(file), helper).replace(/\.ts$/, '.js');
      const asWritten = [name, `./${name}`, relative(dirname(file), helper), `./${relative(dirname(file), helper)}`];
      if (helper !== file && asWritten.some((path) => text.includes(`'${path}'`))) users.get(helper)!.add(testFolderOf(file));
    }
  }
  const astray: string[] = [];
  for (const [helper, folders] of users) {
    const where = testFolderOf(helper);
    if (where === 'helpers') {
      if (folders.size < 2 && !folders.has('helpers')) astray.push(`${relative(TEST, helper)} serves only ${[...folders].join('') || 'no test'}: move it there`);
    } else if (!folders.has(where)) astray.push(`${relative(TEST, helper)} serves no test of ${where}/`);
  }
  t.same(astray, []);
});
