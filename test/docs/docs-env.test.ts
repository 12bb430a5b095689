// Every environment variable the gateway reads is in a docs table whose first column is "Variable", and every
// variable such a table names is read by the code. The code's list is read from src/ at test time, so a new
// variable needs only its row in docs/environment.md.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { REPO, codeSpans, docPages, readPage, tablesOf } from './docs-pages.js';

/** What a `${…}` in a variable name built by a template stands for. */
const TEMPLATE_VALUES: Readonly<Record<string, readonly string[]>> = { signal: ['TRACES', 'METRICS'] };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Names built from a template literal, each placeholder replaced by every value it may take. */
function expand(name: string, where: string): string[] {
  const placeholder = /\$\{(\w+)\}/.exec(name);
  if (!placeholder) return [name];
  const values = TEMPLATE_VALUES[placeholder[1]!];
  if (!values) throw new Error(`${where}: ${name} is built from \${${placeholder[1]}}: add its values to TEMPLATE_VALUES`);
  return values.flatMap((value) => expand(name.replace(placeholder[0], value), where));
}

/**
 * The variables a source text reads: `process.env.NAME`, `process.env['NAME']`, `env['NAME']` (the environment
 * handed to settings readers) and helpers called as `(env, 'NAME'`. Comments are left out.
 */
export function variablesReadBy(source: string, where = 'source'): Set<string> {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const names = new Set<string>();
  const patterns = [
    /process\.env\.([A-Z][A-Z0-9_]*)/g,
    /\benv\s*\[\s*(['"`])([A-Z][A-Z0-9_${}a-z]*)\1\s*\]/g,
    /\(\s*(?:process\.)?env\s*,\s*(['"`])([A-Z][A-Z0-9_${}a-z]*)\1/g,
  ];
  // exporterOf(env, 'TRACES') hands over a placeholder's value, not a variable's name.
  const placeholderValues = new Set(Object.values(TEMPLATE_VALUES).flat());
  for (const pattern of patterns) {
    for (const match of code.matchAll(pattern)) {
      for (const name of expand(match[2] ?? match[1]!, where)) if (!placeholderValues.has(name)) names.add(name);
    }
  }
  return names;
}

/** The variables named in the first column of every docs table headed "Variable", with their page. */
function documentedVariables(): Map<string, string> {
  const documented = new Map<string, string>();
  for (const page of docPages()) {
    for (const table of tablesOf(readPage(page))) {
      if (table.header[0] !== 'Variable') continue;
      for (const row of table.rows) for (const name of codeSpans(row[0]!)) if (/^[A-Z][A-Z0-9_]*$/.test(name)) documented.set(name, page);
    }
  }
  return documented;
}

t.test('every variable the code reads is documented, and every documented one is read', async (t) => {
  const read = new Map<string, string>();
  for (const file of sourceFiles(join(REPO, 'src'))) {
    const where = relative(REPO, file);
    for (const name of variablesReadBy(readFileSync(file, 'utf8'), where)) if (!read.has(name)) read.set(name, where);
  }
  const documented = documentedVariables();
  t.ok(read.size >= 30, `the code's variables were found (${read.size})`);
  t.same([...read].filter(([name]) => !documented.has(name)).map(([name, where]) => `${name} (read in ${where})`), [], 'read but not in a Variable table of docs/');
  t.same([...documented].filter(([name]) => !read.has(name)).map(([name, page]) => `${name} (documented in ${page})`), [], 'documented but read nowhere in src/');
});

t.test('the reader of the code finds each form, and not what comments mention', async (t) => {
  const found = variablesReadBy(
    [
      "const port = integer(env, 'PORT', 8080, 0);",
      "const host = env['HOST'] || '127.0.0.1';",
      'const level = process.env.LOG_LEVEL;',
      "const own = env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`];",
      "const traces = exporterOf(env, 'TRACES');",
      "// env['COMMENTED_OUT'] is not read",
    ].join('\n'),
  );
  t.same([...found].sort(), ['HOST', 'LOG_LEVEL', 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'PORT']);
  t.throws(() => variablesReadBy("env[`X_${region}`]"), /TEMPLATE_VALUES/, 'a placeholder it cannot expand is an error, not a silent miss');
});
