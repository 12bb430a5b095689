// WORKERS=2 without Redis: the node:cluster primary holds the callers' counts, so a limit is one count for both workers.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { HI, SEARCH_KEY, bearer, callersRoutes, digestLine, startUsageMock } from './helpers/callers-routes.js';
import { logLinesOf } from './helpers/server-process.js';

const HARNESS = fileURLToPath(new URL('./helpers/cluster-gateway.ts', import.meta.url));

t.test('WORKERS=2 without Redis: exactly requests_per_minute answers across the two workers', async (t) => {
  const mock = await startUsageMock();
  t.teardown(() => mock.upstream.close());
  const routes = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    limits: { requests_per_minute: 10, concurrent_requests: 50 }`);
  const child = spawn(process.execPath, ['--import', 'tsx', HARNESS], {
    env: { PATH: process.env['PATH'] ?? '', ROUTES_YAML: routes, MOCK_BASE_URL: `${mock.upstream.origin}/v1`, MOCK_API_KEY: 'k' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (piece: Buffer) => (output += piece.toString()));
  child.stderr.on('data', (piece: Buffer) => (output += piece.toString()));
  t.teardown(async () => {
    if (child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  });
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no cluster within 30 s: ${output}`)), 30_000);
    child.stdout.on('data', () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match && output.split('"worker listening"').length > 2) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
  });

  const ask = () =>
    fetch(`${origin}/v1/chat/completions`, {
      method: 'POST',
      // A connection of its own each, so the primary hands them round the workers.
      headers: { 'content-type': 'application/json', connection: 'close', ...bearer(SEARCH_KEY) },
      body: JSON.stringify({ model: 'mock/big', messages: HI }),
    }).then(async (response) => {
      await response.text();
      return response.status;
    });
  const started = Date.now();
  const statuses: number[] = [];
  for (let i = 0; i < 11; i++) statuses.push(await ask());
  const elapsed = Date.now() - started;
  // 10 per minute refills one every 6 s.
  t.equal(statuses.filter((status) => status === 200).length, 10 + Math.min(Math.floor(elapsed / 6000), 1), `answered in ${elapsed} ms: ${statuses.join(' ')}`);
  if (elapsed < 6000) t.equal(statuses[10], 429, 'the 11th is refused');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const pids = new Set(logLinesOf(output).filter((line) => line['msg'] === 'request' && line['status'] === 200).map((line) => line['pid']));
  t.equal(pids.size, 2, 'both workers answered');
  t.equal(mock.answered(), statuses.filter((status) => status === 200).length);
});
