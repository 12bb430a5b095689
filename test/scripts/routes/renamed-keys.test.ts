import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { compileRoutes } from '../../../scripts/routes/compile-routes.js';
import { loadRoutes } from '../../../scripts/routes/load-routes.js';
import { formatProblem } from '../../../scripts/routes/problem.js';
import { RENAMED, renamedInFile, type Renamed } from '../../../scripts/routes/renamed-keys.js';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** A 0.1.0 roster as the shipped example had it: the gateway's overrides under the names clients read. */
const OLD_ROSTER = `version: 1
providers:
  anthropic:
    dialect: anthropic
    base_url: https://api.anthropic.com/v1
    api_key_env: ANTHROPIC_API_KEY
    base_url_env: ANTHROPIC_BASE_URL
  openai:
    endpoints:
      - { base_url: https://api.openai.com/v1, api_key_env: OPENAI_API_KEY, base_url_env: OPENAI_BASE_URL }
models:
  anthropic/claude-x: { max_output_tokens: 1000 }
  openai/gpt-x:
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

t.test('npm run check names the base_url_env values 0.2.0 renamed, at line:col, with what to write; still OK', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'renamed-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'routes.yaml');
  writeFileSync(file, OLD_ROSTER);
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/check.ts'], { cwd: repoRoot, env: { ...process.env, ROUTES_FILE: file }, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
  t.equal(code, 0, 'a renamed value still compiles: it is a warning');
  t.equal(stdout, `${file}: OK (2 models, 2 providers)\n`);
  t.strictSame(stderr.split('\n'), [
    `${file}:7:19: "ANTHROPIC_BASE_URL" was renamed to "GATEWAY_ANTHROPIC_BASE_URL" in 0.2.0: write base_url_env: GATEWAY_ANTHROPIC_BASE_URL, and set GATEWAY_ANTHROPIC_BASE_URL where the gateway runs (ANTHROPIC_BASE_URL is the variable Claude Code and Anthropic's SDKs read, so a shell that points them at this gateway would have the gateway send its traffic to itself)`,
    `${file}:10:91: "OPENAI_BASE_URL" was renamed to "GATEWAY_OPENAI_BASE_URL" in 0.2.0: write base_url_env: GATEWAY_OPENAI_BASE_URL, and set GATEWAY_OPENAI_BASE_URL where the gateway runs (OPENAI_BASE_URL is the variable OpenAI's SDKs and most OpenAI-compatible tools read, so a shell that points them at this gateway would have the gateway send its traffic to itself)`,
    '',
  ]);
});

t.test('the shipped example carries no name a release renamed', async (t) => {
  const found = renamedInFile(loadRoutes(readFileSync(join(repoRoot, 'routes.yaml'), 'utf8')));
  t.strictSame(found, { keys: [], values: [] });
});

t.test('a renamed or removed key (the table is data): named at the key, where the schema would say "unknown key"', async (t) => {
  const table: Renamed[] = [
    { at: ['defaults', 'retries'], to: 'max_attempts', version: '0.9.0', write: 'max_attempts: N (attempts in all, the first included)' },
    { at: ['providers', '*', 'endpoints', '*', 'region'], version: '0.9.0', write: 'name: REGION (it names the endpoint in logs and metrics)' },
  ];
  const text = `version: 1
providers:
  p:
    endpoints:
      - { base_url: https://a.example/v1, region: eu }
      - { base_url: https://b.example/v1 }
models:
  p/m:
defaults:
  retries: 2
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;
  t.strictSame(renamedInFile(loadRoutes(text), table), {
    keys: [
      { line: 10, col: 3, message: '"retries" was renamed to "max_attempts" in 0.9.0: write max_attempts: N (attempts in all, the first included)' },
      { line: 5, col: 43, message: '"region" was removed in 0.9.0: write name: REGION (it names the endpoint in logs and metrics)' },
    ],
    values: [],
  });
  const compiled = compileRoutes(text, { renamed: table });
  t.strictSame(compiled.ok ? [] : compiled.problems.map(formatProblem.bind(null, 'routes.yaml')), [
    'routes.yaml:5:43: "region" was removed in 0.9.0: write name: REGION (it names the endpoint in logs and metrics)',
    'routes.yaml:10:3: "retries" was renamed to "max_attempts" in 0.9.0: write max_attempts: N (attempts in all, the first included)',
  ], 'the build and check say it instead of "unknown key", and nothing compiles');
  t.strictSame(renamedInFile(loadRoutes(text.replace('retries: 2', 'max_attempts: 2').replace(', region: eu', '')), table), { keys: [], values: [] }, 'the new spelling is quiet');
});

t.test('every entry of the table names a release, and says what to write', async (t) => {
  for (const entry of RENAMED) {
    t.match(entry.version, /^\d+\.\d+\.\d+$/);
    t.ok(entry.write.length > 0 && entry.at.length > 0);
    if (entry.value !== undefined) t.ok(entry.to !== undefined, `a renamed value names its new spelling (${entry.value})`);
  }
});
