// WORKERS=2 without Redis: the node:cluster primary holds the callers' counts, so a limit is one count for both workers.
import t from 'tap';
import { HI, SEARCH_KEY, bearer, callersRoutes, digestLine, startUsageMock } from '../helpers/callers-routes.js';
import { logLinesOf, startCallersCluster } from './server-process.js';

// Two workers starting on a loaded 2-core machine can take a while.
t.setTimeout(180_000);

t.test('WORKERS=2 without Redis: exactly requests_per_minute answers across the two workers', async (t) => {
  const mock = await startUsageMock();
  t.teardown(() => mock.upstream.close());
  const routes = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    limits: { requests_per_minute: 10, concurrent_requests: 50 }`);
  const { origin, output } = await startCallersCluster(t, routes, mock.upstream.origin);

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
  const pids = new Set(logLinesOf(output()).filter((line) => line['msg'] === 'request' && line['status'] === 200).map((line) => line['pid']));
  t.equal(pids.size, 2, 'both workers answered');
  t.equal(mock.answered(), answered);
});
