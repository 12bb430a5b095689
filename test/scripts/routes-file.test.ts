// ROUTES_FILE: a routes.yaml outside the gateway's tree is what `npm run check`, `build` and `review` read, and
// every problem in it is named at its path as written (test/process/routes-file-process.test.ts builds and serves one).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { npm, ROSTER } from '../helpers/routes-file-rig.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

// npm and tsx on a machine shared with other work.
t.setTimeout(300_000);

t.test('a problem in ROUTES_FILE is reported at that path:LINE:COL, and nothing is built', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'routes-file-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'routes.yaml');
  writeFileSync(file, ROSTER.replace('upstream_model: upstream-name', 'upstream_model: upstream-name, max_output_tokens: 0'));
  for (const script of ['check', 'build']) {
    const result = await npm(repoRoot, [script], { ROUTES_FILE: file });
    t.equal(result.code, 1, script);
    t.equal(result.stderr, `${file}:8:71: models."mine/only-here".max_output_tokens: must be >= 1\n${file}: 1 problem; nothing generated\n`, script);
  }
  const missing = await npm(repoRoot, ['check'], { ROUTES_FILE: 'nowhere/routes.yaml' }, dir);
  t.equal(missing.stderr, 'nowhere/routes.yaml: cannot read: ENOENT: no such file or directory\n', 'named as it was written');
});

t.test('review of ROUTES_FILE: --base reads it in its own git repository, --base-file from any copy', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'routes-file-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd: dir, stdio: 'pipe' });
  git('init', '-q');
  writeFileSync(join(dir, 'routes.yaml'), ROSTER);
  git('add', 'routes.yaml');
  git('commit', '-qm', 'my roster');
  writeFileSync(join(dir, 'old.yaml'), ROSTER);
  // The model is taken off the roster: breaking for its callers.
  writeFileSync(join(dir, 'routes.yaml'), ROSTER.replace('mine/only-here', 'mine/renamed'));

  const base = await npm(repoRoot, ['review', '--', '--base', 'main'], { ROUTES_FILE: 'routes.yaml' }, dir);
  t.equal(base.code, 1, base.stderr);
  t.match(base.stdout, /^### routes\.yaml review: 1 breaking[^\n]*\n\n`main:routes\.yaml` → `routes\.yaml`\n/);
  t.match(base.stdout, /mine\/only-here/);
  const baseFile = await npm(repoRoot, ['review', '--', '--json', '--base-file', join(dir, 'old.yaml')], { ROUTES_FILE: join(dir, 'routes.yaml') });
  t.equal(baseFile.code, 1, baseFile.stderr);
  t.equal((JSON.parse(baseFile.stdout) as { breaking: unknown[] }).breaking.length, 1);
  const both = await npm(repoRoot, ['review', '--', '--base', 'main', '--base-file', 'old.yaml'], {});
  t.equal(both.code, 2);
  t.match(both.stderr, /^review: give --base or --base-file, not both\n/);
});
