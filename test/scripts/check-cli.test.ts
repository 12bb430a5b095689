import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const broken = 'test/fixtures/routes/many-problems.yaml';

/** Runs `node --import tsx scripts/<script> <file>` from the repository root, as `npm run check` would. */
function run(script: string, file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', `scripts/${script}`, file], { cwd: repoRoot, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

const expectedProblems = [
  `${broken}:5:15: providers.openai.base_url: must not carry credentials, a query or a fragment (use api_key_env and headers)`,
  `${broken}:6:18: providers.openai.api_key_env: "openai_key" is not an environment variable name (A-Z, 0-9 and _, not starting with a digit)`,
  `${broken}:7:16: providers.openai.headers.Host: is set by the gateway and cannot be overridden`,
  `${broken}:10:3: models."openai/gpt-4o": out of order: belongs first, before "openai/gpt-4o-mini" (line 9), in code-point order`,
  `${broken}:11:3: models."opnai/o3": unknown provider "opnai"`,
  `${broken}:12:3: duplicate key "opnai/o3": it is first given on line 11; keep one of the two (a key may appear once in a map)`,
  `${broken}:14:3: defaults: unknown key "timeout"`,
  `${broken}:16:3: errors: invalid key "4xy": an error key is an HTTP status ("429"), a class ("4xx", "5xx") or "default" (top level only)`,
  `${broken}:17:22: errors.default.status: must be <= 599`,
];

t.test('check accepts the shipped routes.yaml', async (t) => {
  const { code, stdout, stderr } = await run('check.ts', 'routes.yaml');
  t.equal(code, 0, stderr);
  t.match(stdout, /^routes\.yaml: OK \(\d+ models, \d+ providers\)\n$/);
  t.equal(stderr, '');
});

t.test('check prints every problem of a broken file as FILE:LINE:COL and exits 1', async (t) => {
  const { code, stdout, stderr } = await run('check.ts', broken);
  t.equal(code, 1);
  t.equal(stdout, '');
  t.strictSame(stderr.split('\n'), [...expectedProblems, `${broken}: ${expectedProblems.length} problems; nothing generated`, '']);
});

t.test('check and build name a file they cannot read in one line, without a stack trace, and exit 1', async (t) => {
  for (const script of ['check.ts', 'build.ts']) {
    const { code, stdout, stderr } = await run(script, 'no-such-routes.yaml');
    t.equal(code, 1, script);
    t.equal(stdout, '', script);
    t.equal(stderr, 'no-such-routes.yaml: cannot read: ENOENT: no such file or directory\n', script);
  }
  const { code, stderr } = await run('check.ts', 'test/fixtures');
  t.equal(code, 1);
  t.equal(stderr, 'test/fixtures: cannot read: EISDIR: illegal operation on a directory\n');
});

t.test('build refuses a broken file and leaves src/generated alone', async (t) => {
  const generated = new URL('../../src/generated/routes.ts', import.meta.url);
  const before = statSync(generated).mtimeMs;
  const { code, stderr } = await run('build.ts', broken);
  t.equal(code, 1);
  t.strictSame(stderr.split('\n').slice(0, expectedProblems.length), expectedProblems);
  t.match(stderr, /nothing generated\n$/);
  t.equal(statSync(generated).mtimeMs, before, 'src/generated/routes.ts was not rewritten');
});
