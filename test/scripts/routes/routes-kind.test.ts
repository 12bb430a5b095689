// routes.yaml `kind`: embedding only on a provider whose dialect has an embeddings API (check and build fail at
// that model's line otherwise, nothing generated), no other value, no chat-only key, no fallback of another kind;
// the shipped roster has an embedding model on openai and on google.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { compileRoutes } from '../../../scripts/routes/compile-routes.js';
import { tempDir } from '../../helpers/temp-dir.js';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

function routes(models: string): string {
  return `version: 1
providers:
  claude:
    dialect: anthropic
    base_url: https://claude.example/v1
  gem:
    dialect: gemini
    base_url: https://gem.example/v1beta
  oai:
    base_url: https://oai.example/v1
models:
${models}errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;
}

function problems(models: string): string[] {
  const result = compileRoutes(routes(models));
  return result.ok ? [] : result.problems.map((problem) => `${problem.line}:${problem.col}: ${problem.message}`);
}

function run(script: string, file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', `scripts/${script}`, file], { cwd: repoRoot, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

t.test('kind: embedding on an anthropic provider: check and build fail at the line, nothing generated', async (t) => {
  const dir = tempDir('routes-kind');
  const file = join(dir, 'routes.yaml');
  writeFileSync(file, routes('  claude/embed: { max_output_tokens: 10, kind: embedding }\n  oai/embed: { kind: embedding }\n'));
  for (const script of ['check.ts', 'build.ts']) {
    const { code, stdout, stderr } = await run(script, file);
    t.equal(code, 1, script);
    t.equal(stdout, '', script);
    const lines = stderr.split('\n');
    t.match(lines[0], /^\S*routes\.yaml:12:48: models\."claude\/embed"\.kind: embedding needs a provider whose dialect has an embeddings API \(gemini, openai\); "claude" speaks anthropic$/, script);
    t.match(lines[1], /routes\.yaml: 1 problem; nothing generated$/, script);
  }
});

t.test('kind takes chat or embedding only; chat is allowed written out', async (t) => {
  t.strictSame(problems('  gem/c: { kind: embedding }\n  oai/a: { kind: chat }\n  oai/b: { kind: embedding }\n'), []);
  t.match(problems('  oai/a: { kind: rerank }\n'), [/^12:18: models\."oai\/a"\.kind: must be one of/]);
});

t.test('chat-only keys and fallbacks of another kind are refused on an embedding model', async (t) => {
  t.match(problems('  oai/a: { kind: embedding, reasoning: adaptive }\n'), [/^12:29: models\."oai\/a"\.reasoning: is for chat models; this one is kind: embedding$/]);
  t.match(problems('  oai/a: { kind: embedding, api: responses }\n'), [/api: is for chat models/]);
  t.match(problems('  oai/a: { kind: embedding, max_output_tokens: 5 }\n'), [/max_output_tokens: is for chat models/]);
  t.match(problems('  oai/a: { kind: embedding, fallback: [oai/b] }\n  oai/b:\n'), [/fallback\[0\]: "oai\/b" is a chat model; "oai\/a" is kind: embedding/]);
  t.match(problems('  oai/a: { fallback: [oai/b] }\n  oai/b: { kind: embedding }\n'), [/fallback\[0\]: "oai\/b" is a embedding model/]);
  t.strictSame(problems('  gem/a: { kind: embedding }\n  oai/b: { kind: embedding, fallback: [gem/a] }\n'), [], 'an embedding fallback on another dialect');
});

t.test('the shipped routes.yaml has an embedding model on openai and one on google', async (t) => {
  const result = compileRoutes(readFileSync(join(repoRoot, 'routes.yaml'), 'utf8'));
  if (!result.ok) throw new Error('the shipped routes.yaml does not compile');
  const embedding = Object.entries(result.tables.models).filter(([, route]) => route?.kind === 'embedding');
  t.strictSame(new Set(embedding.map(([, route]) => result.tables.providers[route!.provider]!.dialect)), new Set(['openai', 'gemini']));
  t.ok(embedding.some(([model]) => model.startsWith('openai/')));
  t.ok(embedding.some(([model]) => model.startsWith('google/')));
});
