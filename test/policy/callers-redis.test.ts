// Callers' limits and spend counted in a real redis-server shared by two gateway instances: one count for the deployment,
// spend that outlives a restart, and a Redis that dies mid-run without the gateway stopping.
import { Redis } from 'ioredis';
import t from 'tap';
import { envelopeOf, startGateway } from '../helpers/gateway.js';
import { HI, SEARCH_KEY, bearer, callersRoutes, digestLine, startUsageMock } from '../helpers/callers-routes.js';
import { storeUp, until } from './limit-store.js';
import { startRedisServer } from './redis-server.js';

const LIMITED = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    models: [mock/big]
    limits: { requests_per_minute: 10 }
    budget: { usd_per_month: 2.5 }`);

t.test('two instances sharing Redis: exactly requests_per_minute answers across both, then 429 with the headers', async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const mock = await startUsageMock({ prompt: 10, completion: 5 });
  t.teardown(() => mock.upstream.close());
  const a = await startGateway({ routes: LIMITED, upstreamOrigin: mock.upstream.origin, redisUrl: redis.url });
  t.teardown(() => a.close());
  const b = await startGateway({ routes: LIMITED, upstreamOrigin: mock.upstream.origin, redisUrl: redis.url });
  t.teardown(() => b.close());
  await until('both connected', async () => (await storeUp(a)) === 1 && (await storeUp(b)) === 1);

  const started = Date.now();
  const answers = await Promise.all(Array.from({ length: 11 }, (_, i) => (i % 2 === 0 ? a : b).post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY))));
  const elapsed = Date.now() - started;
  // 10 per minute refills one every 6 s: within that, exactly 10 of the 11 are answered, whichever instance took them.
  const refills = Math.floor(elapsed / 6000);
  const answered = answers.filter((answer) => answer.status === 200).length;
  // A machine so loaded that the eleven took over 6 s may have had one refill admit one more.
  if (refills === 0) t.equal(answered, 10, `exactly 10 of 11 answered across both instances, in ${elapsed} ms`);
  else t.ok(answered >= 10 && answered <= 10 + refills, `${answered} answered in ${elapsed} ms`);
  const limited = answers.filter((answer) => answer.status === 429);
  if (refills === 0) {
    t.equal(limited.length, 1);
    const refused = limited[0]!;
    t.equal(refused.headers.get('x-ratelimit-limit-requests'), '10');
    t.equal(refused.headers.get('x-ratelimit-remaining-requests'), '0');
    t.match(refused.headers.get('x-ratelimit-reset-requests'), /^(\d+m)?[\d.]+s$/);
    t.ok(Number(refused.headers.get('retry-after')) >= 1);
    t.match(await envelopeOf(refused), { gateway_code: 'caller_rate_limited', type: 'requests', code: 'rate_limit_exceeded' });
  }
  t.equal(mock.answered(), answers.filter((answer) => answer.status === 200).length, 'only admitted requests reached the provider');
  t.ok(a.requestLogs().length > 0 && b.requestLogs().length > 0, 'both instances answered');
});

t.test("a restart of one instance keeps the month's spend", async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  // 1.4 USD per answer (see callers-routes.ts prices): two answers pass 2.5 USD.
  const mock = await startUsageMock({ prompt: 1_000_000, completion: 250_000, cached: 200_000 });
  t.teardown(() => mock.upstream.close());
  const first = await startGateway({ routes: LIMITED, upstreamOrigin: mock.upstream.origin, redisUrl: redis.url });
  await until('connected', async () => (await storeUp(first)) === 1);
  t.same(first.warnings, [], 'with REDIS_URL no warning about spend lost on restart');
  for (let i = 0; i < 2; i++) t.equal((await first.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY))).status, 200);
  await first.close();
  // Every key expires: the bucket once it would be full again, the spend after its period (with a margin).
  const client = new Redis(redis.url);
  t.teardown(() => client.disconnect());
  const month = new Date().toISOString().slice(0, 7);
  const bucketTtl = await client.pttl('chat-routing-gateway:{search-team}:requests');
  t.ok(bucketTtl > 0 && bucketTtl <= 13_000, `requests bucket expires when refilled: ${bucketTtl} ms`);
  const spendTtl = await client.ttl(`chat-routing-gateway:{search-team}:usd:${month}`);
  t.ok(spendTtl > 28 * 86_400 && spendTtl <= 32 * 86_400, `month spend expires after its month: ${spendTtl} s`);
  t.equal(Number(await client.get(`chat-routing-gateway:{search-team}:usd:${month}`)), 2.8);

  const again = await startGateway({ routes: LIMITED, upstreamOrigin: mock.upstream.origin, redisUrl: redis.url });
  t.teardown(() => again.close());
  await until('connected', async () => (await storeUp(again)) === 1);
  const over = await again.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY));
  t.equal(over.status, 429, 'the restarted instance knows the month is spent');
  t.match(await envelopeOf(over), { gateway_code: 'quota_exceeded', type: 'insufficient_quota' });
  t.equal(mock.answered(), 2);
});

t.test('Redis killed mid-run: answers continue counted in the process, gateway_limit_store_up 0, then 1 once it is back', async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const mock = await startUsageMock({ prompt: 10, completion: 5 });
  t.teardown(() => mock.upstream.close());
  const generous = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    limits: { requests_per_minute: 1000, concurrent_requests: 10 }`);
  const gateway = await startGateway({ routes: generous, upstreamOrigin: mock.upstream.origin, redisUrl: redis.url });
  t.teardown(() => gateway.close());
  await until('connected', async () => (await storeUp(gateway)) === 1);
  t.equal((await gateway.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY))).status, 200);

  await redis.kill();
  for (let i = 0; i < 5; i++) {
    const answer = await gateway.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY));
    t.equal(answer.status, 200, `answer ${i + 1} while Redis is down`);
    t.equal(answer.headers.get('x-ratelimit-limit-requests'), '1000', 'still limited, counted in the process');
  }
  await until('store down', async () => (await storeUp(gateway)) === 0);
  const downLines = () => gateway.logLines.filter((line) => line.includes('Redis unreachable')).length;
  t.equal(downLines(), 1, 'one log line for the change of state, however many reconnection attempts');

  await redis.restart();
  await until('store up again', async () => (await storeUp(gateway)) === 1);
  t.equal(gateway.logLines.filter((line) => line.includes('Redis reachable again')).length, 1);
  t.equal((await gateway.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY))).status, 200, 'counted in Redis again');
  t.equal(downLines(), 1);
});
