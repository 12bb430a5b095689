// WORKERS=1 without Redis: the only worker counts a limited caller in its own process (no IPC round trip on the
// request's path) and reports to the primary off the path; the primary's counts carry over a reload.
import t from 'tap';
import { HI, SEARCH_KEY, bearer, callersRoutes, digestLine, startUsageMock } from '../helpers/callers-routes.js';
import { copyBuild } from './reload-build.js';
import { logLinesOf, startServerProcess, waitForOutput } from './server-process.js';

t.setTimeout(120_000);

const ALONE = "callers' limits: the only worker admits alone, reporting to the primary";
/** How long a worker waits for its primary before counting on its own (src/policy/cluster/worker-store.ts). */
const PRIMARY_TIMEOUT_MS = 2000;

t.test('WORKERS=1: a limited caller is admitted without waiting on the primary, and counted exactly', async (t) => {
  const build = copyBuild(callersRoutes(`  search-team:\n    keys: [${digestLine(SEARCH_KEY)}]\n    limits: { requests_per_minute: 2, concurrent_requests: 5 }`));
  t.teardown(() => build.remove());
  const mock = await startUsageMock();
  t.teardown(() => mock.upstream.close());
  const server = await startServerProcess({ MOCK_BASE_URL: `${mock.upstream.origin}/v1`, MOCK_API_KEY: 'k', WORKERS: '1' }, [build.serverJs]);
  t.teardown(() => {
    server.child.kill('SIGCONT');
    server.child.kill('SIGKILL');
  });
  const alone = await waitForOutput(server, (output) => (logLinesOf(output).some((line) => line['msg'] === ALONE) ? true : undefined), 15_000).catch(() => false);
  t.ok(alone, 'the worker says it admits alone');

  // The primary stopped: a request that needs its answer waits PRIMARY_TIMEOUT_MS, then falls back to the worker's own counts.
  server.child.kill('SIGSTOP');
  const ask = async () => {
    const started = Date.now();
    const response = await fetch(`${server.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(SEARCH_KEY) },
      body: JSON.stringify({ model: 'mock/big', messages: HI, max_tokens: 5 }),
    });
    await response.text();
    return { status: response.status, ms: Date.now() - started };
  };
  const first = await ask();
  const second = await ask();
  const third = await ask();
  server.child.kill('SIGCONT');
  t.equal(first.status, 200);
  t.ok(first.ms < PRIMARY_TIMEOUT_MS, `answered in ${first.ms} ms with the primary stopped: admission did not wait for it`);
  t.equal(second.status, 200, 'the second of two a minute');
  t.equal(third.status, 429, 'the third is refused: counted in the worker, exactly');
  t.equal(mock.answered(), 2);
});
