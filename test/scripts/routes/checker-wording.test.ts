// What `npm run check` says about the mistakes people make in routes.yaml: each names the line they typed and
// what to do, not the YAML parser's words or an innocent neighbour.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { compileRoutes } from '../../../scripts/routes/compile-routes.js';
import { formatProblem } from '../../../scripts/routes/problem.js';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const TAIL = 'errors:\n  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }\n';
const routes = (providers: string, models: readonly string[]) => `version: 1\nproviders:\n${providers}models:\n${models.map((model) => `  ${model}:\n`).join('')}${TAIL}`;
const OPENAI = '  openai:\n    base_url: https://api.openai.com/v1\n    api_key_env: OPENAI_API_KEY\n';
const problemsOf = (text: string, previousText?: string) => {
  const result = compileRoutes(text, previousText === undefined ? {} : { previousText });
  return result.ok ? [] : result.problems.map((problem) => formatProblem('routes.yaml', problem));
};

const BEFORE = routes(OPENAI, ['openai/gpt-4o', 'openai/o3']);
// openai/gpt-4o-mini added on the line above openai/gpt-4o, where it does not belong: a swap the file alone cannot place.
const AFTER = routes(OPENAI, ['openai/gpt-4o-mini', 'openai/gpt-4o', 'openai/o3']);

t.test('a model added out of order is named, not the neighbour it was put above, when the last commit says which is new', async (t) => {
  t.strictSame(problemsOf(AFTER, BEFORE), [
    'routes.yaml:7:3: models."openai/gpt-4o-mini": out of order: belongs between "openai/gpt-4o" (line 8) and "openai/o3" (line 9), in code-point order',
  ]);
  t.strictSame(problemsOf(AFTER), ['routes.yaml:8:3: models."openai/gpt-4o": out of order: belongs first, before "openai/gpt-4o-mini" (line 7), in code-point order'], 'without a history, the later of the two, as before');
});

t.test('npm run check reads the last committed routes.yaml to tell which model is new', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'routes-history-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', ...args], { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  writeFileSync(join(dir, 'routes.yaml'), BEFORE);
  git('add', 'routes.yaml');
  git('commit', '-q', '-m', 'roster');
  writeFileSync(join(dir, 'routes.yaml'), AFTER);
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', join(repoRoot, 'scripts/check.ts'), join(dir, 'routes.yaml')], { cwd: repoRoot, timeout: 30_000 }, (error, _out, err) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stderr: err }),
    );
  });
  t.equal(code, 1);
  t.match(stderr, /routes\.yaml:7:3: models\."openai\/gpt-4o-mini": out of order: belongs between "openai\/gpt-4o" \(line 8\)/);
  t.notMatch(stderr, /models\."openai\/gpt-4o":/, 'the neighbour is not blamed');
});

t.test('a duplicate key names the key and the line where it was first given', async (t) => {
  const text = routes(`${OPENAI}    headers: { X-Title: a }\n    api_key_env: OTHER_KEY\n`, ['openai/gpt-4o']);
  t.strictSame(problemsOf(text), ['routes.yaml:7:5: duplicate key "api_key_env": it is first given on line 5; keep one of the two (a key may appear once in a map)']);
});

t.test("a provider key dedented to a column no key uses says where it could go, not the parser's words", async (t) => {
  const text = routes('  openai:\n    base_url: https://api.openai.com/v1\n   api_key_env: OPENAI_API_KEY\n', ['openai/gpt-4o']);
  t.strictSame(problemsOf(text), [
    'routes.yaml:5:1: "api_key_env" is indented 3 spaces, a column no key above it uses, so YAML cannot tell which map it belongs to; indent it 4 spaces to line up with "base_url" (line 4), or 2 spaces to line up with "openai" (line 3)',
  ]);
});

t.test("a provider key dedented to the providers' column is one problem naming the provider it belongs to", async (t) => {
  const text = routes('  openai:\n    base_url: https://api.openai.com/v1\n  api_key_env: OPENAI_API_KEY\n  xai:\n    base_url: https://api.x.ai/v1\n', ['openai/gpt-4o']);
  t.strictSame(problemsOf(text), [
    'routes.yaml:5:3: providers.api_key_env: "api_key_env" is a provider\'s setting, not a provider: it is indented like a provider id; indent it to line up with the keys of provider "openai" (line 3), which it belongs to',
  ]);
});
