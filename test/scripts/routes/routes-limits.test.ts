import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { compileRoutes } from '../../../scripts/routes/compile-routes.js';
import { MAX_CALLERS, MAX_MODELS, MAX_ROUTES_BYTES } from '../../../scripts/routes/load-routes.js';
import { formatProblem } from '../../../scripts/routes/problem.js';

/** Issue 34, item 12: the routes file is capped, __proto__ is refused, and check and review stay linear up to the caps. */
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const tsx = import.meta.resolve('tsx');

const HEAD = ['version: 1', 'providers:', '  alpha:', '    base_url: https://alpha.example/v1', '    api_key_env: ALPHA_KEY'];
const ERRORS = ['errors:', '  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }'];
const model = (i: number) => `alpha/m${String(i).padStart(5, '0')}`;

function problemsOf(text: string): string[] {
  const result = compileRoutes(text);
  return result.ok ? [] : result.problems.map((problem) => formatProblem('routes.yaml', problem));
}

t.test('a file over 1 MiB: one problem, where the limit is crossed, and nothing parsed', async (t) => {
  t.equal(MAX_ROUTES_BYTES, 1024 * 1024);
  const lines = [...HEAD, 'models:'];
  // Valid YAML all the way: today it would compile (and take its time).
  for (let i = 0; lines.join('\n').length <= MAX_ROUTES_BYTES + 10_000; i++) lines.push(`  ${model(i)}: { upstream_model: upstream-${i}-with-a-long-name-to-fill-the-file }  # a comment`);
  const text = [...lines, ...ERRORS].join('\n');
  const crossing = text.slice(0, MAX_ROUTES_BYTES).split('\n');
  const started = Date.now();
  t.strictSame(problemsOf(text), [
    `routes.yaml:${crossing.length}:${crossing.at(-1)!.length + 1}: the file is over 1,048,576 bytes (1 MiB), the most the compiler reads, and this line crosses it; nothing was checked. A routes.yaml holds at most 5,000 models and 1,000 callers`,
  ]);
  t.ok(Date.now() - started < 2000, 'refused without parsing');
  t.strictSame(problemsOf('# é\n'.repeat(MAX_ROUTES_BYTES / 5) + 'version: 1\n').length, 1, 'bytes, not characters: 4 characters, 5 bytes a line');
});

t.test('npm run check and npm run review read no further than the cap: a 300 MB file is refused at once, within a 256 MiB heap', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'routes-limits-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const huge = join(dir, 'routes.yaml');
  writeFileSync(huge, 'version: 1\n');
  truncateSync(huge, 300 * 1024 * 1024); // sparse: nothing written to disk past the first line
  const check = await run('scripts/check.ts', [huge]);
  t.equal(check.code, 1);
  t.match(check.stderr, /routes\.yaml:2:1048566: the file is over 1,048,576 bytes \(1 MiB\), the most the compiler reads, and this line crosses it; nothing was checked/);
  const review = await run('scripts/review/review.ts', [huge, huge]);
  t.equal(review.code, 2);
  t.match(review.stderr, /the old side does not compile, nothing compared\n$/);
  t.ok(check.ms < 15_000 && review.ms < 15_000, `check ${check.ms} ms, review ${review.ms} ms`);
});

t.test(`more than ${MAX_MODELS} models or ${MAX_CALLERS} callers: one problem at the first one over`, async (t) => {
  const models = Array.from({ length: MAX_MODELS + 2 }, (_, i) => `  ${model(i)}:`);
  t.strictSame(problemsOf([...HEAD, 'models:', ...models, ...ERRORS].join('\n')), [
    `routes.yaml:${HEAD.length + 2 + MAX_MODELS}:3: models: 5,002 routing strings, over the 5,000 the compiler takes; this is the first one over. Nothing else was checked`,
  ]);
  t.strictSame(problemsOf([...HEAD, 'models:', ...models.slice(0, MAX_MODELS), ...ERRORS].join('\n')), [], `${MAX_MODELS} models compile`);
  const callers = Array.from({ length: MAX_CALLERS + 1 }, (_, i) => `  team-${i}: { key_env: TEAM_${i}_KEYS }`);
  const withCallers = [...HEAD, 'models:', `  ${model(0)}:`, ...ERRORS, 'callers:', ...callers].join('\n');
  t.strictSame(problemsOf(withCallers), [`routes.yaml:${HEAD.length + 6 + MAX_CALLERS}:3: callers: 1,001 callers, over the 1,000 the compiler takes; this is the first one over. Nothing else was checked`]);
});

t.test('a __proto__ key is refused at its line, wherever it is (a header of that name was dropped without a word)', async (t) => {
  const text = [...HEAD, '    headers: { X-Title: gateway, __proto__: x }', 'models:', `  ${model(0)}: { price: { input_per_mtok: 1, output_per_mtok: 1, __proto__: { a: 1 } } }`, ...ERRORS, '  __proto__: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }'].join('\n');
  const refused = '"__proto__" cannot be a key: JavaScript reserves it (it would be dropped without a word); rename or remove it';
  t.strictSame(problemsOf(text), [`routes.yaml:6:34: ${refused}`, `routes.yaml:8:67: ${refused}`, `routes.yaml:11:3: ${refused}`]);
  // Keys that are one key once compiled ("429" and 429) are a duplicate too: one of them was dropped as well.
  const twice = [...HEAD, 'models:', `  ${model(0)}:`, ...ERRORS, '  "429": { status: 429, type: rate_limit_error, code: rate_limit_exceeded, gateway_code: a }', '  429: { status: 503, type: server_error, code: overloaded, gateway_code: b }'].join('\n');
  t.strictSame(problemsOf(twice), ['routes.yaml:11:3: duplicate key "429": it is first given on line 10; keep one of the two (a key may appear once in a map)']);
});

/** The largest file the caps allow that costs the most: 5,000 models, 1,000 callers each with 55 prefix patterns. */
function worstCase(patternShift: number): string {
  const lines = [...HEAD, 'models:'];
  for (let i = 0; i < MAX_MODELS; i++) lines.push(`  ${model(i)}:`);
  lines.push(...ERRORS, 'callers:');
  for (let c = 0; c < MAX_CALLERS; c++) {
    const patterns = Array.from({ length: 55 }, (_, p) => `"${model((c * 13 + p * 83 + patternShift) % MAX_MODELS).slice(0, -1)}*"`);
    lines.push(`  t${c}:`, `    key_env: T${c}_KEYS`, `    models: [${patterns.join(', ')}]`);
  }
  return `${lines.join('\n')}\n`;
}

function run(script: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(process.execPath, ['--max-old-space-size=256', '--import', tsx, join(repoRoot, script), ...args], { cwd: repoRoot, timeout: 170_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr, ms: Date.now() - started });
    });
  });
}

t.test('check and review of the costliest file the caps allow: linear work, in seconds, within a 256 MiB heap', async (t) => {
  t.setTimeout(400_000);
  const dir = mkdtempSync(join(tmpdir(), 'routes-limits-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const before = join(dir, 'before.yaml');
  const after = join(dir, 'after.yaml');
  writeFileSync(before, worstCase(0));
  writeFileSync(after, worstCase(1));
  t.ok(Buffer.byteLength(worstCase(0)) < MAX_ROUTES_BYTES, `${Buffer.byteLength(worstCase(0))} bytes`);
  // Quadratic (each of 55,000 patterns scanned the 5,000 models, twice per compile) they took 36 s and 100 s on a
  // loaded 2-core machine; linear, a few seconds each. The bound leaves room for the load, not for the quadratic cost.
  const check = await run('scripts/check.ts', [before]);
  t.equal(check.code, 0, check.stderr);
  const review = await run('scripts/review/review.ts', ['--json', before, after]);
  t.equal(review.code, 1, review.stderr);
  t.ok(check.ms + review.ms < 50_000, `check took ${check.ms} ms, review ${review.ms} ms`);
  t.ok((JSON.parse(review.stdout) as { breaking: unknown[] }).breaking.length > 1000, 'callers lost models');
});
