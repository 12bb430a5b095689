// A caller's absurd max_tokens x n, or a provider's absurd usage, takes a tokens bucket so deep in debt that the
// expiry the Redis script asked for its key (the time to refill, in ms) was more than PEXPIRE takes: the script
// failed, and the instance took Redis for down and counted in the process, for every caller, until its probe
// answered. Any caller with a tokens_per_minute limit could do it with one request, as often as it liked.
import t, { type Test } from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { HI, SEARCH_KEY, bearer, callersRoutes, digestLine, startUsageMock } from '../helpers/callers-routes.js';
import { storeUp, until } from './limit-store.js';
import { startRedisServer } from './redis-server.js';

const routes = (tpm: number) =>
  callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    models: [mock/big]
    limits: { tokens_per_minute: ${tpm} }
    budget: { usd_per_month: 1000000000 }`);

async function setUp(t: Test, tpm: number, usage?: { prompt: number; completion: number }) {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const mock = await startUsageMock(usage);
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes: routes(tpm), upstreamOrigin: mock.upstream.origin, redisUrl: redis.url });
  t.teardown(() => gateway.close());
  await until('connected to Redis', async () => (await storeUp(gateway)) === 1);
  return gateway;
}

const unreachable = (lines: string[]) => lines.filter((line) => line.includes('Redis unreachable'));

t.test('a request reserving max_tokens 2^53-1 times n 128: answered, and Redis stays the store', async (t) => {
  const gateway = await setUp(t, 100_000);
  const absurd = await gateway.post({ model: 'mock/big', messages: HI, max_tokens: Number.MAX_SAFE_INTEGER, n: 128 }, bearer(SEARCH_KEY));
  t.equal(absurd.status, 200);
  await absurd.text();
  // Its settle went to Redis before this admit (one connection, in order): an error there is logged by now.
  const next = await gateway.post({ model: 'mock/big', messages: HI, max_tokens: 10 }, bearer(SEARCH_KEY));
  await next.text();
  t.strictSame(unreachable(gateway.logLines), [], 'no script failed');
  t.equal(await storeUp(gateway), 1);
});

t.test('a provider reporting 2^53-1 prompt tokens to a caller of 1,000 tokens per minute: Redis stays the store', async (t) => {
  const gateway = await setUp(t, 1000, { prompt: Number.MAX_SAFE_INTEGER, completion: 0 });
  const first = await gateway.post({ model: 'mock/big', messages: HI, max_tokens: 10 }, bearer(SEARCH_KEY));
  t.equal(first.status, 200);
  await first.text();
  const next = await gateway.post({ model: 'mock/big', messages: HI, max_tokens: 10 }, bearer(SEARCH_KEY));
  t.equal(next.status, 429, 'the bucket is in debt: the next request waits for it');
  await next.text();
  t.strictSame(unreachable(gateway.logLines), [], 'no script failed');
  t.equal(await storeUp(gateway), 1);
});
