// WORKERS=2 without Redis: the node:cluster primary holds the callers' counts, so a limit is one count for both workers.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { compileRoutes } from '../../scripts/routes/compile-routes.js';
import { HI, SEARCH_KEY, bearer, callersRoutes, digestLine, startUsageMock } from '../helpers/callers-routes.js';
import { logLinesOf } from './server-process.js';

const HARNESS = fileURLToPath(new URL('./cluster-gateway.mjs', import.meta.url));
// Two workers starting on a loaded 2-core machine can take a while.
t.setTimeout(180_000);

t.test('WORKERS=2 without Redis: exactly requests_per_minute answers across the two workers', async (t) => {
  const mock = await startUsageMock();
  t.teardown(() => mock.upstream.close());
  const routes = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    limits: { requests_per_minute: 10, concurrent_requests: 50 }`);
  const compiled = compileRoutes(routes);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  const child = spawn(process.execPath, [HARNESS], {
    env: { PATH: process.env['PATH'] ?? '', ROUTE_TABLES: JSON.stringify(compiled.tables), MOCK_BASE_URL: `${mock.upstream.origin}/v1`, MOCK_API_KEY: 'k' },
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
    const timer = setTimeout(() => reject(new Error(`no cluster within 120 s: ${output}`)), 120_000);
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
  const statuses = await Promise.all(Array.from({ length: 11 }, ask));
  const elapsed = Date.now() - started;
  const answered = statuses.filter((status) => status === 200).length;
  // 10 per minute refills one every 6 s: sent within that, exactly 10 are answered. On a machine so loaded that the
  // eleven took longer, a refill may have admitted one more, never two.
  if (elapsed < 6000) t.equal(answered, 10, `exactly 10 of 11 answered, in ${elapsed} ms: ${statuses.join(' ')}`);
  else t.ok(answered >= 10 && answered <= 10 + Math.floor(elapsed / 6000), `${answered} answered in ${elapsed} ms`);
  t.ok(answered === 11 || statuses.includes(429), 'the one over the limit is refused');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const pids = new Set(logLinesOf(output).filter((line) => line['msg'] === 'request' && line['status'] === 200).map((line) => line['pid']));
  t.equal(pids.size, 2, 'both workers answered');
  t.equal(mock.answered(), answered);
});
