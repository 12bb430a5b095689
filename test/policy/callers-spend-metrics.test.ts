// gateway_caller_spend_usd and gateway_caller_budget_usd: each budgeted caller's spend in the current UTC day and month,
// read from the store that counts it (the process's memory, or a real redis-server shared by two instances), agreeing
// with what the requests cost; and a stalled Redis does not stall /metrics.
import t from 'tap';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { BATCH_KEY, BUDGETED_ROUTES, DOLLAR_FORTY_USAGE, HI, OTHER_KEY, SEARCH_KEY, bearer, startUsageMock } from '../helpers/callers-routes.js';
import { parseExposition, valueOf, type Sample } from '../helpers/prometheus.js';
import { startPrometheus } from '../helpers/prometheus-server.js';
import { gatewayOnRedis, storeUp, until } from './limit-store.js';
import { startRedisServer } from './redis-server.js';

const ROUTES = BUDGETED_ROUTES;
const USAGE = DOLLAR_FORTY_USAGE;

async function scrape(gateway: RunningGateway): Promise<Sample[]> {
  return parseExposition(await (await fetch(`${gateway.origin}/metrics`)).text());
}

const spend = (samples: Sample[], caller: string, period: string, store: string) => valueOf(samples, 'gateway_caller_spend_usd', { caller, period, store });
const costOf = (samples: Sample[], caller: string) => valueOf(samples, 'gateway_cost_usd_total', { caller, model: 'mock/big' }) ?? 0;
const close = (a: number | undefined, b: number) => a !== undefined && Math.abs(a - b) < 1e-9;

async function ask(gateway: RunningGateway, key: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    const answer = await gateway.post({ model: 'mock/big', messages: HI }, bearer(key));
    if (answer.status !== 200) throw new Error(`answered ${answer.status}: ${await answer.text()}`);
    await answer.text();
  }
}

t.test('in memory: the gauges read the counts of the process and agree with gateway_cost_usd_total', async (t) => {
  const mock = await startUsageMock(USAGE);
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes: ROUTES, upstreamOrigin: mock.upstream.origin });
  t.teardown(() => gateway.close());

  let samples = await scrape(gateway);
  t.equal(spend(samples, 'search-team', 'day', 'memory'), 0, 'a budgeted caller that has spent nothing reads 0');
  t.equal(valueOf(samples, 'gateway_caller_budget_usd', { caller: 'search-team', period: 'day' }), 10);
  t.equal(valueOf(samples, 'gateway_caller_budget_usd', { caller: 'search-team', period: 'month' }), 100);
  t.equal(valueOf(samples, 'gateway_caller_budget_usd', { caller: 'batch-team', period: 'month' }), 50);
  t.equal(valueOf(samples, 'gateway_caller_budget_usd', { caller: 'batch-team', period: 'day' }), undefined, 'no day budget, no day budget series');

  await ask(gateway, SEARCH_KEY, 3);
  await ask(gateway, BATCH_KEY, 1);
  await ask(gateway, OTHER_KEY, 2);
  // The spend is settled when the answer ends, which its log line marks.
  await gateway.logged(() => (gateway.requestLogs().length >= 6 ? true : undefined));
  samples = await scrape(gateway);
  t.ok(close(spend(samples, 'search-team', 'day', 'memory'), 4.2), 'three answers today');
  t.ok(close(spend(samples, 'search-team', 'month', 'memory'), 4.2), 'three answers this month');
  t.ok(close(spend(samples, 'batch-team', 'day', 'memory'), 1.4), 'the day is counted without a day budget');
  t.ok(close(spend(samples, 'batch-team', 'month', 'memory'), 1.4));
  t.ok(close(spend(samples, 'search-team', 'month', 'memory'), costOf(samples, 'search-team')), 'the gauge agrees with the cost counter');
  t.ok(close(spend(samples, 'batch-team', 'month', 'memory'), costOf(samples, 'batch-team')));
  t.notOk(samples.some((sample) => sample.name === 'gateway_caller_spend_usd' && sample.labels['caller'] === 'other-team'), 'a caller without a budget has no spend counted, so no gauge');
  t.ok(close(costOf(samples, 'other-team'), 2.8), 'its cost is in gateway_cost_usd_total');
});

t.test('with Redis: every instance reads the deployment-wide spend from Redis (store="redis")', async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const mock = await startUsageMock(USAGE);
  t.teardown(() => mock.upstream.close());
  const a = await startGateway({ routes: ROUTES, upstreamOrigin: mock.upstream.origin, redisUrl: redis.url });
  t.teardown(() => a.close());
  const b = await startGateway({ routes: ROUTES, upstreamOrigin: mock.upstream.origin, redisUrl: redis.url });
  t.teardown(() => b.close());
  await until('both connected', async () => (await storeUp(a)) === 1 && (await storeUp(b)) === 1);

  await ask(a, SEARCH_KEY, 2);
  await ask(b, SEARCH_KEY, 1);
  await ask(b, BATCH_KEY, 2);
  await a.logged(() => (a.requestLogs().length >= 2 ? true : undefined));
  await b.logged(() => (b.requestLogs().length >= 3 ? true : undefined));
  // A reading serves scrapes for up to 5 s: wait for the one after the settles.
  for (const gateway of [a, b]) {
    await until('the spend of both instances on each', async () => {
      const samples = await scrape(gateway);
      return close(spend(samples, 'search-team', 'day', 'redis'), 4.2) && close(spend(samples, 'batch-team', 'month', 'redis'), 2.8);
    });
  }
  const [fromA, fromB] = [await scrape(a), await scrape(b)];
  t.ok(close(spend(fromA, 'search-team', 'month', 'redis'), costOf(fromA, 'search-team') + costOf(fromB, 'search-team')), 'Redis spend is the sum of both instances’ cost counters');
  t.equal(spend(fromA, 'search-team', 'month', 'memory'), undefined, 'labelled redis, not memory');
  t.equal(valueOf(fromB, 'gateway_caller_budget_usd', { caller: 'search-team', period: 'month' }), 100);
});

t.test('a stalled Redis does not stall /metrics: the scrape answers within its bound with the last reading', async (t) => {
  const { gateway, redis } = await gatewayOnRedis(t, ROUTES, USAGE);
  await ask(gateway, SEARCH_KEY, 1);
  await gateway.logged(() => (gateway.requestLogs().length >= 1 ? true : undefined));
  await until('the reading after the settle', async () => close(spend(await scrape(gateway), 'search-team', 'day', 'redis'), 1.4));

  redis.pause();
  t.teardown(() => redis.resume());
  // Once the 5 s a reading lasts are past, a scrape asks the stopped Redis: each one still answers within the bound.
  let askedRedis = false;
  await until('a scrape that asked the stopped Redis', async () => {
    const started = Date.now();
    const samples = await scrape(gateway);
    const took = Date.now() - started;
    if (took >= 4000) throw new Error(`/metrics took ${took} ms while Redis is stopped`);
    if (!close(spend(samples, 'search-team', 'day', 'redis'), 1.4)) throw new Error('the last reading is not served');
    askedRedis = took >= 900;
    return askedRedis;
  });
  t.ok(askedRedis, '/metrics answered within 4 s with the last reading while Redis is stopped');
});

t.test('a real Prometheus scrapes the gauges, and the remaining-budget query of docs/callers.md answers', async (t) => {
  const mock = await startUsageMock(USAGE);
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes: ROUTES, upstreamOrigin: mock.upstream.origin });
  t.teardown(() => gateway.close());
  await ask(gateway, SEARCH_KEY, 2);
  await gateway.logged(() => (gateway.requestLogs().length >= 2 ? true : undefined));
  const prometheus = await startPrometheus({ targets: [new URL(gateway.origin).host] });
  t.teardown(() => prometheus.stop());
  const left = await prometheus.waitFor(
    'gateway_caller_budget_usd - on(caller, period) group_left max by (caller, period) (gateway_caller_spend_usd)',
    (result) => result.length === 3,
  );
  const of = (caller: string, period: string) => left.find((each) => each.metric['caller'] === caller && each.metric['period'] === period)?.value;
  t.ok(close(of('search-team', 'day'), 10 - 2.8), 'search-team: 7.2 USD left today');
  t.ok(close(of('search-team', 'month'), 100 - 2.8));
  t.ok(close(of('batch-team', 'month'), 50), 'batch-team has spent nothing');
});
