// Callers across a reload of the real primary (dist/server.js, copied so the test can rebuild it): a key revoked by
// edit, build, SIGHUP (a digest in routes.yaml, or a line of GATEWAY_API_KEYS_FILE), and limits and budgets counted
// before the reload that still hold after it (the counts live in the primary).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BATCH_KEY, HI, SEARCH_KEY, bearer, callersRoutes, digestLine, startUsageMock } from '../helpers/callers-routes.js';
import { copyBuild } from './reload-build.js';
import { logLinesOf, startServerProcess, waitForOutput, type ServerProcess } from './server-process.js';

t.setTimeout(120_000);

const RELOADED = 'reloaded: new workers serve, the old ones finish what they serve';

/** SIGHUP, and the new workers' pids once they serve. */
async function reload(server: ServerProcess): Promise<number[]> {
  const done = logLinesOf(server.output()).filter((line) => line['msg'] === RELOADED).length;
  server.child.kill('SIGHUP');
  const line = await waitForOutput(server, (output) => logLinesOf(output).filter((each) => each['msg'] === RELOADED)[done], 30_000);
  return line['workers'] as number[];
}

/** One chat request on a connection of its own (a kept-alive one may still reach the retiring worker, by design). */
async function ask(server: ServerProcess, key: string, model = 'mock/big'): Promise<{ status: number; code: unknown }> {
  const response = await fetch(`${server.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', connection: 'close', ...bearer(key) },
    body: JSON.stringify({ model, messages: HI, max_tokens: 5 }),
  });
  const body = (await response.json()) as { error?: { gateway_code?: unknown } };
  return { status: response.status, code: body.error?.gateway_code ?? null };
}

t.test('a key revoked in routes.yaml: edit, build, SIGHUP, and it is refused', async (t) => {
  const both = callersRoutes(`  search-team:\n    keys: [${digestLine(SEARCH_KEY)}, ${digestLine(BATCH_KEY)}]`);
  const build = copyBuild(both);
  t.teardown(() => build.remove());
  const mock = await startUsageMock();
  t.teardown(() => mock.upstream.close());
  const server = await startServerProcess({ MOCK_BASE_URL: `${mock.upstream.origin}/v1`, MOCK_API_KEY: 'k' }, [build.serverJs]);
  t.teardown(() => server.child.kill('SIGKILL'));
  t.match(await ask(server, BATCH_KEY), { status: 200 }, 'the key serves before');

  build.writeRoutes(callersRoutes(`  search-team:\n    keys: [${digestLine(SEARCH_KEY)}]`));
  await reload(server);
  t.match(await ask(server, BATCH_KEY), { status: 401, code: 'unauthorized' }, 'the revoked key is refused after the reload');
  t.match(await ask(server, SEARCH_KEY), { status: 200 }, 'the other key still serves');
});

t.test('a key removed from GATEWAY_API_KEYS_FILE: edit, SIGHUP, and it is refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-reload-keys-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const keysFile = join(dir, 'keys');
  writeFileSync(keysFile, `${SEARCH_KEY}\n${BATCH_KEY}\n`);
  const build = copyBuild(callersRoutes('').replace(/callers:\n/, ''));
  t.teardown(() => build.remove());
  const mock = await startUsageMock();
  t.teardown(() => mock.upstream.close());
  const server = await startServerProcess({ MOCK_BASE_URL: `${mock.upstream.origin}/v1`, MOCK_API_KEY: 'k', GATEWAY_API_KEYS_FILE: keysFile }, [build.serverJs]);
  t.teardown(() => server.child.kill('SIGKILL'));
  t.match(await ask(server, BATCH_KEY), { status: 200 }, 'the key serves before');

  writeFileSync(keysFile, `# ${'revoked'}\n${SEARCH_KEY}\n`);
  await reload(server);
  t.match(await ask(server, BATCH_KEY), { status: 401, code: 'unauthorized' }, 'the removed key is refused after the reload');
  t.match(await ask(server, SEARCH_KEY), { status: 200 }, 'the other key still serves');
  t.notMatch(server.output(), new RegExp(`${SEARCH_KEY}|${BATCH_KEY}`), 'no key in the output');
});

// WORKERS=2: the primary decides every admission. WORKERS=1: the worker counted alone and reported; the primary takes
// the counting back when the reload starts and hands its counts to the new worker.
for (const workers of [1, 2]) t.test(`WORKERS=${workers}: limits and budgets counted before a reload still hold after it`, async (t) => {
  const routes = (extra = '') =>
    callersRoutes(`  batch-team:
    keys: [${digestLine(BATCH_KEY)}]
    models: [mock/big]
    budget: { usd_per_day: 0.0001 }
  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    limits: { requests_per_minute: 2 }${extra}`);
  const build = copyBuild(routes());
  t.teardown(() => build.remove());
  // 10 prompt and 5 completion tokens on mock/big: 0.00002 USD an answer.
  const mock = await startUsageMock({ prompt: 10, completion: 5 });
  t.teardown(() => mock.upstream.close());
  // Two workers: connections are handed round-robin, through the reload too.
  const server = await startServerProcess({ MOCK_BASE_URL: `${mock.upstream.origin}/v1`, MOCK_API_KEY: 'k', WORKERS: String(workers) }, [build.serverJs]);
  t.teardown(() => server.child.kill('SIGKILL'));

  const started = Date.now();
  t.match(await ask(server, SEARCH_KEY), { status: 200 }, 'one of the two requests a minute, before the reload');
  const spent: number[] = [];
  for (let i = 0; i < 20; i++) {
    const { status, code } = await ask(server, BATCH_KEY);
    spent.push(status);
    if (status === 429) {
      t.equal(code, 'quota_exceeded');
      break;
    }
  }
  t.equal(spent.at(-1), 429, `the budget was spent before the reload: ${spent.join(' ')}`);

  // A changed roster (the caller may now use a model more), so the new workers run other tables.
  build.writeRoutes(routes(`\n    models: [mock/big, mock/gpt-4.1-mini]`));
  const newWorkers = await reload(server);
  t.equal(newWorkers.length, workers);
  // Every old worker gone: the port stays open for the new ones.
  await waitForOutput(server, (output) => (logLinesOf(output).filter((line) => line['msg'] === 'worker retired').length === workers ? true : undefined), 30_000);
  const after = [await ask(server, SEARCH_KEY), await ask(server, SEARCH_KEY)];
  const elapsed = Date.now() - started;
  // 2 a minute refills one every 30 s: within that, exactly one more is answered.
  if (elapsed < 30_000) t.match(after, [{ status: 200 }, { status: 429, code: 'caller_rate_limited' }], `the request counted before the reload still counts (${elapsed} ms)`);
  else t.ok(after[0]!.status === 200, `${elapsed} ms: the machine is too slow to tell`);
  t.match(await ask(server, BATCH_KEY), { status: 429, code: 'quota_exceeded' }, 'the spend counted before the reload still counts');
});
