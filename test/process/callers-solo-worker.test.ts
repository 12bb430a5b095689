// WORKERS=1 without Redis: the only worker counts a limited caller in its own process (no IPC round trip on the
// request's path) and reports to the primary off the path; the primary's counts carry over a reload.
import t, { type Test } from 'tap';
import { HI, SEARCH_KEY, bearer, callersRoutes, digestLine, startUsageMock, type UsageMock } from '../helpers/callers-routes.js';
import { parseExposition, valueOf } from '../helpers/prometheus.js';
import { until } from '../policy/limit-store.js';
import { copyBuild } from './reload-build.js';
import { logLinesOf, startServerProcess, waitForOutput } from './server-process.js';

t.setTimeout(120_000);

const ALONE = "callers' limits: the only worker admits alone, reporting to the primary";
/** How long a worker waits for its primary before counting on its own (src/policy/cluster/worker-store.ts). */
const PRIMARY_TIMEOUT_MS = 2000;

/**
 * A WORKERS=1 gateway whose caller search-team has `limits`, in front of `mock`, once its worker admits alone.
 * `ask` sends one request on a connection closed after it (so a retiring worker can exit) and gives its status.
 */
async function soloGateway(t: Test, limits: string, mock: UsageMock) {
  const build = copyBuild(callersRoutes(`  search-team:\n    keys: [${digestLine(SEARCH_KEY)}]\n    limits: ${limits}`));
  t.teardown(() => build.remove());
  const server = await startServerProcess({ MOCK_BASE_URL: `${mock.upstream.origin}/v1`, MOCK_API_KEY: 'k', WORKERS: '1' }, [build.serverJs]);
  t.teardown(() => server.child.kill('SIGKILL'));
  const handOvers = (output: string) => logLinesOf(output).filter((line) => line['msg'] === ALONE).length;
  await waitForOutput(server, (output) => (handOvers(output) === 1 ? true : undefined), 15_000);
  const ask = () =>
    fetch(`${server.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'close', ...bearer(SEARCH_KEY) },
      body: JSON.stringify({ model: 'mock/big', messages: HI, max_tokens: 5 }),
    }).then(async (response) => {
      await response.text();
      return response.status;
    });
  return { server, handOvers, ask };
}

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

t.test('WORKERS=1: requests in flight through a reload and both hand-overs are counted once, and given back once', async (t) => {
  // Slow answers: three stay in flight across the reload.
  const mock = await startUsageMock({ prompt: 10, completion: 5 }, 1500);
  t.teardown(() => mock.upstream.close());
  const { server, handOvers, ask } = await soloGateway(t, '{ concurrent_requests: 3 }', mock);
  const inFlight = [ask(), ask(), ask()];
  // The three admitted by the worker alone (the upstream has them), then the reload starts.
  await until('three at the upstream', () => mock.upstream.requests.length >= 3);
  server.child.kill('SIGHUP');
  t.equal(await ask(), 429, 'a fourth, during the reload, is over the three in flight');
  t.same(await Promise.all(inFlight), [200, 200, 200]);
  // The old worker gone, the new one takes the counts over: the three given back, none counted twice.
  await waitForOutput(server, (output) => (handOvers(output) === 2 ? true : undefined), 30_000);
  const again = [ask(), ask(), ask()];
  await until('three more at the upstream', () => mock.upstream.requests.length >= 6);
  t.equal(await ask(), 429, 'after the hand-over, three in flight are still the limit');
  t.same(await Promise.all(again), [200, 200, 200], 'and three are admitted: the ones before were given back');
});

t.test('WORKERS=1 under load through two reloads: every answer is charged once, none lost at a hand-over', async (t) => {
  const build = copyBuild(callersRoutes(`  search-team:\n    keys: [${digestLine(SEARCH_KEY)}]\n    models: [mock/big]\n    budget: { usd_per_day: 1000 }`));
  t.teardown(() => build.remove());
  // 10 prompt and 5 completion tokens on mock/big: 0.00002 USD an answer; a little slow, so some are in flight at every hand-over.
  const mock = await startUsageMock({ prompt: 10, completion: 5 }, 30);
  t.teardown(() => mock.upstream.close());
  const server = await startServerProcess({ MOCK_BASE_URL: `${mock.upstream.origin}/v1`, MOCK_API_KEY: 'k', WORKERS: '1' }, [build.serverJs]);
  t.teardown(() => server.child.kill('SIGKILL'));
  const count = (output: string, msg: string) => logLinesOf(output).filter((line) => line['msg'] === msg).length;
  await waitForOutput(server, (output) => (count(output, ALONE) === 1 ? true : undefined), 15_000);

  let running = true;
  const statuses: number[] = [];
  const loop = async () => {
    while (running) {
      const response = await fetch(`${server.origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', connection: 'close', ...bearer(SEARCH_KEY) },
        body: JSON.stringify({ model: 'mock/big', messages: HI, max_tokens: 5 }),
      });
      await response.text();
      statuses.push(response.status);
    }
  };
  const loops = Array.from({ length: 6 }, loop);
  for (let reload = 1; reload <= 2; reload++) {
    await until('answers before the reload', () => statuses.length >= reload * 40);
    server.child.kill('SIGHUP');
    await waitForOutput(server, (output) => (count(output, 'reloaded: new workers serve, the old ones finish what they serve') === reload ? true : undefined), 30_000);
    // The old worker gone, the new one counts alone.
    await waitForOutput(server, (output) => (count(output, ALONE) === reload + 1 ? true : undefined), 30_000);
  }
  await until('answers after the last hand-over', () => statuses.length >= 120);
  running = false;
  await Promise.all(loops);

  t.same([...new Set(statuses)], [200], `${statuses.length} answers, all 200`);
  t.equal(mock.answered(), statuses.length);
  const samples = parseExposition(await (await fetch(`${server.origin}/metrics`)).text());
  const spend = valueOf(samples, 'gateway_caller_spend_usd', { caller: 'search-team', period: 'day', store: 'memory' });
  t.ok(spend !== undefined && Math.abs(spend - statuses.length * 0.00002) < 1e-9, `spend ${spend} is ${statuses.length} answers x 0.00002 USD: each charged once`);
});

t.test('WORKERS=1: answers admitted and settled within one report reach the primary, and a reload keeps them counted', async (t) => {
  const mock = await startUsageMock();
  t.teardown(() => mock.upstream.close());
  // Three a minute: one more comes back every 20 s, far longer than a reload takes.
  const { server, handOvers, ask } = await soloGateway(t, '{ requests_per_minute: 3 }', mock);
  // Sent together, answered at once: most are admitted and settled before the worker's next report.
  t.same(await Promise.all([ask(), ask(), ask()]), [200, 200, 200]);
  server.child.kill('SIGHUP');
  // The new worker starts from the primary's counts, which hold the three only as the reports told them.
  await waitForOutput(server, (output) => (handOvers(output) === 2 ? true : undefined), 30_000);
  t.equal(await ask(), 429, 'the fourth in the minute is refused by the new worker');
  t.equal(mock.answered(), 3);
});
