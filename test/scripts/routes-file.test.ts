// ROUTES_FILE: a routes.yaml outside the gateway's tree is what `npm run build`, `check` and `review` read, and
// what the built gateway serves. The build runs in a copy of the tree (without its routes.yaml), so it cannot
// pick up the shipped example, and so it leaves this worktree's dist/ to the tests running beside it.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { copyGatewayTree } from '../helpers/gateway-tree.js';
import { startMockUpstream } from '../helpers/mock-upstream.js';
import { startServerProcess } from '../process/server-process.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

// A real npm ci-less build (tsc over src/) on a machine shared with other work.
t.setTimeout(300_000);

/** `npm --prefix <tree> run <script>` typed in `typedIn` (npm runs it in the tree and says where it was typed in INIT_CWD). */
function npm(tree: string, args: readonly string[], env: Record<string, string>, typedIn = tree): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('npm', ['--prefix', tree, 'run', '--silent', ...args], { cwd: typedIn, env: { ...process.env, ROUTES_FILE: '', ...env }, timeout: 240_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

/** A roster only this test has: one model, `mine/only-here`, on a provider whose base URL comes from MINE_BASE_URL. */
const ROSTER = `version: 1
providers:
  mine:
    base_url: https://mine.invalid/v1
    base_url_env: MINE_BASE_URL
    api_key_env: MINE_API_KEY
models:
  mine/only-here: { upstream_model: upstream-name }
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

t.test('ROUTES_FILE outside the tree: build and check read it, and the gateway serves its model', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'routes-file-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const tree = copyGatewayTree(join(dir, 'gateway'), { withRoutes: false });
  const config = join(dir, 'my-config');
  mkdirSync(config);
  writeFileSync(join(config, 'routes.yaml'), ROSTER);

  // Relative, typed in the folder above the config: resolved against where it was typed, not the package root.
  const check = await npm(tree, ['check'], { ROUTES_FILE: 'my-config/routes.yaml' }, dir);
  t.equal(check.code, 0, check.stderr);
  t.equal(check.stdout, 'my-config/routes.yaml: OK (1 models, 1 providers)\n');

  const build = await npm(tree, ['build'], { ROUTES_FILE: join(config, 'routes.yaml') });
  t.equal(build.code, 0, build.stderr);

  const upstream = await startMockUpstream((_request, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'upstream-name', choices: [{ index: 0, message: { role: 'assistant', content: 'from my roster' }, finish_reason: 'stop' }] }));
  });
  t.teardown(() => upstream.close());
  const server = await startServerProcess({ MINE_BASE_URL: `${upstream.origin}/v1`, MINE_API_KEY: 'sk-mine' }, [join(tree, 'dist', 'server.js')]);
  t.teardown(() => server.child.kill('SIGKILL'));
  const answer = await fetch(`${server.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mine/only-here', messages: [{ role: 'user', content: 'hi' }] }) });
  t.equal(answer.status, 200);
  t.equal(((await answer.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content, 'from my roster');
  t.match(JSON.parse(upstream.requests[0]!.body), { model: 'upstream-name' }, 'sent to the provider that file names');
  const shipped = await fetch(`${server.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }) });
  t.match(await shipped.json(), { error: { code: 'model_not_found' } }, "the shipped example's models are not on this roster");
});

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
