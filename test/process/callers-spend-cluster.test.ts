// WORKERS=2 without Redis: the cluster primary counts the budgets, and a scrape of either worker reads the spend
// from it: the same figure whichever worker answers, the deployment's, never a sum over workers.
import t from 'tap';
import { DOLLAR_FORTY_USAGE, HI, SEARCH_KEY, bearer, callersRoutes, digestLine, startUsageMock } from '../helpers/callers-routes.js';
import { parseExposition, valueOf } from '../helpers/prometheus.js';
import { until } from '../policy/limit-store.js';
import { startCallersCluster } from './server-process.js';

t.setTimeout(180_000);

t.test('WORKERS=2 in memory: every scrape, whichever worker answers, reads the primary’s spend', async (t) => {
  const mock = await startUsageMock(DOLLAR_FORTY_USAGE);
  t.teardown(() => mock.upstream.close());
  const { origin, output } = await startCallersCluster(t, callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    models: [mock/big]
    budget: { usd_per_day: 40 }`), mock.upstream.origin);

  // A connection of its own each, so the primary hands them round the workers.
  const get = (path: string, init: RequestInit = {}) => fetch(`${origin}${path}`, { ...init, headers: { connection: 'close', ...(init.headers as Record<string, string>) } });
  for (let i = 0; i < 4; i++) {
    const answer = await get('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(SEARCH_KEY) }, body: JSON.stringify({ model: 'mock/big', messages: HI }) });
    t.equal(answer.status, 200);
    await answer.text();
  }
  const scrape = async () => {
    const samples = parseExposition(await (await get('/metrics')).text());
    return { spend: valueOf(samples, 'gateway_caller_spend_usd', { caller: 'search-team', period: 'day', store: 'memory' }), cost: valueOf(samples, 'gateway_cost_usd_total', { caller: 'search-team', model: 'mock/big' }) };
  };
  const near = (figure: number | undefined, expected: number) => figure !== undefined && Math.abs(figure - expected) < 1e-9;
  // A worker's reading serves its scrapes for up to 5 s: wait until both workers have read the four settles.
  await until('the four answers in the gauge on both workers', async () => {
    const scrapes = await Promise.all(Array.from({ length: 4 }, scrape));
    return scrapes.every((each) => near(each.spend, 5.6));
  }, 60_000);
  for (let i = 0; i < 6; i++) {
    const { spend, cost } = await scrape();
    t.ok(near(spend, 5.6), `scrape ${i}: spend ${spend} is the primary's 4 x 1.4 USD, not a sum over workers`);
    t.ok(near(spend, cost ?? 0), 'and agrees with gateway_cost_usd_total summed over the workers');
  }
  const pids = new Set(output().split('\n').filter((line) => line.includes('"msg":"request"') && line.includes('"status":200')).map((line) => (JSON.parse(line) as { pid: number }).pid));
  t.equal(pids.size, 2, 'both workers answered requests');
});
