// ROUTES_FILE outside the gateway's tree: `npm run build` compiles it and the gateway serves what only it has.
// The build runs in a copy of the tree without its routes.yaml, so it cannot pick up the shipped example, and so
// it leaves this worktree's dist/ to the tests running beside it.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { copyGatewayTree } from '../helpers/gateway-tree.js';
import { startMockUpstream } from '../helpers/mock-upstream.js';
import { npm, ROSTER } from '../helpers/routes-file-rig.js';
import { logLinesOf } from './server-process.js';

/** `npm --prefix <tree> start` typed in `typedIn`, in a process group of its own (npm, then node); resolves once it has logged that it listens. */
async function npmStart(tree: string, typedIn: string, env: Record<string, string>): Promise<{ pid: number; origin: string; output: () => string }> {
  const child = spawn('npm', ['--prefix', tree, 'start'], { cwd: typedIn, detached: true, env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr.on('data', (piece: Buffer) => (output += piece.toString()));
  const origin = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (piece: Buffer) => {
      output += piece.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      // The plain line comes first; the JSON one (LOG_FORMAT=json) may follow in a later piece.
      if (match && /"msg":"listening"/.test(output)) resolve(match[1]!);
    });
    child.on('exit', (code) => reject(new Error(`npm start exited with ${code}: ${output}`)));
  });
  return { pid: child.pid!, origin, output: () => output };
}

// A real build (tsc over src/) on a machine shared with other work.
t.setTimeout(300_000);

t.test('ROUTES_FILE outside the tree, relative to where the command is typed: check reads it, npm start builds it and serves its model', async (t) => {
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

  const upstream = await startMockUpstream((_request, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'upstream-name', choices: [{ index: 0, message: { role: 'assistant', content: 'from my roster' }, finish_reason: 'stop' }] }));
  });
  t.teardown(() => upstream.close());
  // `npm start` builds, then serves: the build inside it must still resolve the relative path from where it was typed.
  const server = await npmStart(tree, dir, { ROUTES_FILE: 'my-config/routes.yaml', LOG_FORMAT: 'json', MINE_BASE_URL: `${upstream.origin}/v1`, MINE_API_KEY: 'sk-mine' });
  t.teardown(() => process.kill(-server.pid, 'SIGKILL'));
  const listening = logLinesOf(server.output()).find((line) => line['msg'] === 'listening');
  t.equal(listening?.['routes_sha256'], createHash('sha256').update(ROSTER).digest('hex'), 'it serves the tables of that file');
  const answer = await fetch(`${server.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mine/only-here', messages: [{ role: 'user', content: 'hi' }] }) });
  t.equal(answer.status, 200);
  t.equal(((await answer.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content, 'from my roster');
  t.match(JSON.parse(upstream.requests[0]!.body), { model: 'upstream-name' }, 'sent to the provider that file names');
  const shipped = await fetch(`${server.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }) });
  t.match(await shipped.json(), { error: { code: 'model_not_found' } }, "the shipped example's models are not on this roster");
});

