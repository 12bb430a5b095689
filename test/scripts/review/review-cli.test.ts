import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { code, reviewMarkdown } from '../../../scripts/review/markdown-output.js';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const reviewScript = join(repoRoot, 'scripts/review/review.ts');
const tsxLoader = import.meta.resolve('tsx');
const fixture = (name: string) => `test/fixtures/review/${name}.yaml`;

// About twenty processes, each compiling with tsx, on a machine shared with other work.
t.setTimeout(300_000);

/** `npm run --silent review -- ARGS` as a process, from `cwd` (the repository root unless given). */
function review(args: string[], cwd = repoRoot): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', tsxLoader, reviewScript, ...args], { cwd, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

t.test('Markdown: the summary line, then breaking first as a table; exit 1 when something breaks', async (t) => {
  const { code: exit, stdout, stderr } = await review([fixture('base'), fixture('breaking')]);
  t.equal(exit, 1, stderr);
  t.equal(stderr, '');
  const lines = stdout.split('\n');
  t.equal(lines[0], '### routes.yaml review: 7 breaking · 0 behaviour changes · 1 safe');
  t.equal(lines[2], '`test/fixtures/review/base.yaml` → `test/fixtures/review/breaking.yaml`');
  t.ok(stdout.indexOf('#### Breaking') < stdout.indexOf('#### Safe'), 'breaking comes first');
  t.notMatch(stdout, /#### Behaviour/, 'an empty section is left out');
  t.ok(lines.includes('| `model_removed` | `alpha/small` | removed: callers sending it get 400 `unknown_model`; probable rename to `alpha/mini` (same provider and upstream model `small`) | 20 |'), 'the rename shown together');
  t.ok(lines.includes('| `model_added` | `alpha/mini` | added (probable rename of `alpha/small`): `alpha` upstream `small`, max_output_tokens none, reasoning `none` | 20 |'));
  t.ok(lines.includes('| `dialect_changed` | provider `gamma` | `dialect` `openai` → `anthropic`: every model of the provider is sent another wire format | 15 |'));
  t.match(stdout, /explicit approval \(the review exits 1\)/);
});

t.test('exit 0 when nothing breaks; --json prints exactly one object with the three sections', async (t) => {
  const behaviour = await review([fixture('base'), fixture('behaviour')]);
  t.equal(behaviour.code, 0, behaviour.stderr);
  t.match(behaviour.stdout, /^### routes\.yaml review: 0 breaking · 11 behaviour changes · 0 safe\n/);
  t.ok(behaviour.stdout.includes('| `error_rule_changed` | all providers | provider status `5xx`: 502 `upstream_error` x-should-retry: true → 503 `upstream_error` x-should-retry: true | 31 |'));
  const json = await review(['--json', fixture('base'), fixture('safe')]);
  t.equal(json.code, 0, json.stderr);
  const parsed = JSON.parse(json.stdout) as Record<string, unknown[]>;
  t.strictSame(Object.keys(parsed), ['breaking', 'behaviour', 'safe']);
  t.equal(parsed['safe']!.length, 8);
  const breaking = await review([fixture('base'), fixture('breaking'), '--json']);
  t.equal(breaking.code, 1, '--json exits as the Markdown form does');
  t.equal((JSON.parse(breaking.stdout) as Record<string, unknown[]>)['breaking']!.length, 7);
  const none = await review([fixture('base'), fixture('base')]);
  t.equal(none.code, 0);
  t.match(none.stdout, /^### routes\.yaml review: 0 breaking · 0 behaviour changes · 0 safe\n[\s\S]*No change that callers can see\./);
});

t.test('a file that does not compile: exit 2 with the compiler\'s file:line:col, naming the side', async (t) => {
  const broken = fixture('broken');
  const newSide = await review([fixture('base'), broken]);
  t.equal(newSide.code, 2);
  t.equal(newSide.stdout, '');
  t.equal(newSide.stderr, `${broken}:8:35: models."alpha/big".max_output_tokens: must be >= 1\n${broken}: 1 problem; the new side does not compile, nothing compared\n`);
  const oldSide = await review(['--json', broken, fixture('base')]);
  t.equal(oldSide.code, 2);
  t.equal(oldSide.stdout, '');
  t.match(oldSide.stderr, /the old side does not compile, nothing compared\n$/);
  const missing = await review([fixture('base'), 'no-such-routes.yaml']);
  t.equal(missing.code, 2);
  t.equal(missing.stderr, 'no-such-routes.yaml: cannot read: ENOENT: no such file or directory\n');
  for (const args of [[], [fixture('base')], ['--base'], ['--frobnicate', 'a', 'b'], ['--base', 'main', 'a', 'b']]) {
    const usage = await review(args);
    t.equal(usage.code, 2, `usage error: ${args.join(' ')}`);
    t.match(usage.stderr, /^review: .*\nusage: npm run --silent review/);
  }
});

t.test('--base REF compares REF:routes.yaml (read with git) with the working tree', async (t) => {
  const repo = mkdtempSync(join(tmpdir(), 'review-git-'));
  t.teardown(() => rmSync(repo, { recursive: true, force: true }));
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd: repo, stdio: 'pipe' });
  git('init', '-q');
  writeFileSync(join(repo, 'routes.yaml'), readFileSync(join(repoRoot, fixture('base'))));
  git('add', 'routes.yaml');
  git('commit', '-qm', 'base roster');
  writeFileSync(join(repo, 'routes.yaml'), readFileSync(join(repoRoot, fixture('breaking'))));

  const result = await review(['--base', 'main'], repo);
  t.equal(result.code, 1, result.stderr);
  t.match(result.stdout, /^### routes\.yaml review: 7 breaking · 0 behaviour changes · 1 safe\n\n`main:routes\.yaml` → `routes\.yaml`\n/);
  const json = await review(['--json', '--base', 'main', 'routes.yaml'], repo);
  t.equal((JSON.parse(json.stdout) as Record<string, unknown[]>)['breaking']!.length, 7);

  writeFileSync(join(repo, 'routes.yaml'), readFileSync(join(repoRoot, fixture('base'))));
  t.equal((await review(['--base', 'main'], repo)).code, 0, 'no change against the base: exit 0');

  const badRef = await review(['--base', 'no-such-branch'], repo);
  t.equal(badRef.code, 2);
  t.match(badRef.stderr, /^no-such-branch:routes\.yaml: cannot read with git: fatal: /);
  t.equal((await review(['--base', '--json'], repo)).code, 2, 'an option is not taken for a revision');

  // A base that does not compile is named as REF:path, with the compiler's line and column.
  writeFileSync(join(repo, 'routes.yaml'), readFileSync(join(repoRoot, fixture('broken'))));
  git('commit', '-qam', 'a broken roster');
  writeFileSync(join(repo, 'routes.yaml'), readFileSync(join(repoRoot, fixture('base'))));
  const brokenBase = await review(['--base', 'HEAD'], repo);
  t.equal(brokenBase.code, 2);
  t.match(brokenBase.stderr, /^HEAD:routes\.yaml:8:35: models\."alpha\/big"\.max_output_tokens: must be >= 1\nHEAD:routes\.yaml: 1 problem; the old side does not compile, nothing compared\n$/);
});

t.test('Markdown cells hold hostile values as inert inline code', async (t) => {
  t.equal(code('alpha/x|y'), '`alpha/x\\|y`', 'a pipe does not open a cell');
  t.equal(code('alpha/`z`'), '`` alpha/`z` ``', 'a backtick cannot close the span; one at an end is padded');
  t.equal(code('a``b'), '```a``b```', 'the fence is longer than any backtick run inside');
  t.equal(code('x'.repeat(500)).length, 2 + 160 + 1, 'long values are cut');
  const markdown = reviewMarkdown(
    { breaking: [{ severity: 'breaking', kind: 'model_removed', model: 'p/a|b`c', provider: 'p', before: { provider: 'p', upstreamModel: '](http://evil)' } }], behaviour: [], safe: [] },
    { old: 'a', new: 'b' },
  );
  const row = markdown.split('\n').find((line) => line.startsWith('| `model_removed`'))!;
  t.equal(row.split(/(?<!\\)\|/).length, 6, 'the row has exactly its four cells');
  t.ok(row.includes('``p/a\\|b`c``'), row);
});
