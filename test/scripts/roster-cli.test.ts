// `npm run --silent roster`: the routing strings, one per line, for a chat UI's static model list; --caller NAME
// those the caller may use (`*` patterns expanded); --json with provider, kind and deprecation.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { tempDir } from '../helpers/temp-dir.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const dir = tempDir('roster');
const file = join(dir, 'routes.yaml');
writeFileSync(
  file,
  `version: 1
providers:
  gem:
    dialect: gemini
    base_url: https://gem.example/v1beta
  oai:
    base_url: https://oai.example/v1
models:
  gem/embed: { kind: embedding }
  gem/flash:
  oai/chat-a:
  oai/chat-b: { deprecated: { since: 2026-01-01, sunset: 2099-01-01, replacement: oai/chat-a } }
  oai/embed: { kind: embedding }
callers:
  team:
    keys: [sha256:${'a'.repeat(64)}]
    models: ["oai/chat*", gem/embed]
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`,
);

function npm(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('npm', ['run', '--silent', 'roster', '--', ...args], { cwd: repoRoot, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

t.test('every routing string, one per line, in roster order', async (t) => {
  const { code, stdout, stderr } = await npm([file]);
  t.equal(code, 0, stderr);
  t.equal(stdout, 'gem/embed\ngem/flash\noai/chat-a\noai/chat-b\noai/embed\n');
});

t.test('--caller with a * pattern: only what it may use; --json: provider, kind, deprecation', async (t) => {
  const { code, stdout, stderr } = await npm(['--caller', 'team', '--json', file]);
  t.equal(code, 0, stderr);
  t.strictSame(JSON.parse(stdout), [
    { model: 'gem/embed', provider: 'gem', kind: 'embedding', deprecated: null },
    { model: 'oai/chat-a', provider: 'oai', kind: 'chat', deprecated: null },
    { model: 'oai/chat-b', provider: 'oai', kind: 'chat', deprecated: { since: '2026-01-01', sunset: '2099-01-01', replacement: 'oai/chat-a' } },
  ]);
});

t.test('an unknown caller: one line on stderr, exit 2, nothing on stdout', async (t) => {
  const { code, stdout, stderr } = await npm(['--caller', 'nobody', file]);
  t.equal(code, 2);
  t.equal(stdout, '');
  t.match(stderr, /has no caller "nobody" \(its callers: team\)/);
});
