// A Redis that stalls rather than dies (DEBUG SLEEP, a process paused with SIGSTOP): its connections stay open, so
// nothing reconnects. The gateway counts in the process meanwhile, probes, comes back and carries over the spend;
// an admit that ran after its instance gave up leaves no in-flight entry behind; entries live for a renewed lease.
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { HI, SEARCH_KEY, bearer, callersRoutes, digestLine, startUsageMock } from '../helpers/callers-routes.js';
import { storeUp, until } from './limit-store.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

const lines = (gateway: RunningGateway, text: string) => gateway.logLines.filter((line) => line.includes(text)).map((line) => JSON.parse(line) as Record<string, unknown>);
const IN_FLIGHT = 'chat-routing-gateway:{search-team}:in-flight';
const monthKey = () => `chat-routing-gateway:{search-team}:usd:${new Date().toISOString().slice(0, 7)}`;

/** Two gateways on one Redis, both connected, and a client of our own to look at the keys and stall the server. */
async function twoInstances(t: Test, routes: string, usage: { prompt: number; completion: number; cached?: number }, delayMs = 0) {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const mock = await startUsageMock(usage, delayMs);
  t.teardown(() => mock.upstream.close());
  const a = await startGateway({ routes, upstreamOrigin: mock.upstream.origin, redisUrl: redis.url });
  t.teardown(() => a.close());
  const b = await startGateway({ routes, upstreamOrigin: mock.upstream.origin, redisUrl: redis.url });
  t.teardown(() => b.close());
  const client = new Redis(redis.url, { lazyConnect: true });
  await client.connect();
  t.teardown(() => client.disconnect());
  await until('both connected', async () => (await storeUp(a)) === 1 && (await storeUp(b)) === 1);
  return { redis, mock, a, b, client };
}

/** Stalls Redis for `seconds` with DEBUG SLEEP, sent on our own connection; resolves when it answers again. */
function debugSleep(client: Redis, seconds: number): Promise<unknown> {
  return client.call('DEBUG', 'SLEEP', String(seconds));
}

// 1.4 USD per answer (callers-routes.ts prices).
const SHARED = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    models: [mock/big]
    limits: { requests_per_minute: 5 }
    budget: { usd_per_month: 1000 }`);
const ONE_ANSWER = { prompt: 1_000_000, completion: 250_000, cached: 200_000 };

t.test('DEBUG SLEEP past the command timeout: the instance counts in the process, probes, comes back; one rpm across both again, the spend carried over', async (t) => {
  const { a, b, client } = await twoInstances(t, SHARED, ONE_ANSWER);
  const slept = debugSleep(client, 3);
  // Sent after the DEBUG SLEEP: Redis runs it (late) once it wakes, but the instance gives up after 1 s.
  const during = await a.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY));
  t.equal(during.status, 200, 'served while Redis sleeps, counted in the process');
  await during.text();
  t.equal(lines(a, 'Redis unreachable').length, 1, 'the stalled command took the instance down');
  await slept;
  await until('instance a back on Redis', () => lines(a, 'Redis reachable again').length === 1);
  t.equal(await storeUp(a), 1);
  t.match(lines(a, 'Redis reachable again')[0], { limit_store: 'redis', carried_usd: 1.4 }, 'the return is logged with the spend carried over');

  // Redis ran the late admit: 4 of the 5 requests left, across both instances.
  const started = Date.now();
  const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).post({ model: 'mock/big', messages: HI, max_tokens: 10 }, bearer(SEARCH_KEY))));
  const refills = Math.floor((Date.now() - started) / 12_000);
  const served = answers.filter((answer) => answer.status === 200).length;
  t.ok(served <= 4 + refills, `${served} of 8 served: one requests_per_minute across both instances again`);
  t.ok(served >= 4, `${served} served: the late admit took one, no more`);
  await Promise.all(answers.map((answer) => answer.text()));
  await until('the spend of every answer in Redis, the one served during the stall included', async () => Math.abs(Number(await client.get(monthKey())) - 1.4 * (served + 1)) < 1e-6);
});

t.test('SIGSTOP: a paused Redis takes the instance down; on SIGCONT it comes back and the spend counted meanwhile reaches Redis', async (t) => {
  const { redis, a, client } = await twoInstances(t, SHARED, ONE_ANSWER);
  pauseFor(t, redis);
  for (let i = 0; i < 2; i++) t.equal((await a.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY))).status, 200, `answer ${i + 1} while Redis is paused`);
  await until('store down', async () => (await storeUp(a)) === 0);
  redis.resume();
  await until('instance a back on Redis', () => lines(a, 'Redis reachable again').length === 1);
  t.equal(lines(a, 'Redis unreachable').length, 1, 'one line each way');
  await until('2.8 USD in Redis', async () => Math.abs(Number(await client.get(monthKey())) - 2.8) < 1e-6);
});

t.test('an admit Redis runs after its instance gave up leaves no in-flight entry: concurrent_requests admits on the other instance', async (t) => {
  const routes = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    limits: { concurrent_requests: 1 }`);
  const { redis, a, b, client } = await twoInstances(t, routes, { prompt: 10, completion: 5 });
  pauseFor(t, redis);
  const during = await a.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY));
  t.equal(during.status, 200, 'served and ended while Redis is paused');
  await during.text();
  redis.resume();
  // Back once Redis answers a PING sent after the late admit: Redis has run the admit by then.
  await until('instance a back on Redis', () => lines(a, 'Redis reachable again').length === 1);
  // Well within the 30 s lease: the entry goes because the settle removed it by its id, not because it expired.
  await until('no entry in flight', async () => (await client.zcard(IN_FLIGHT)) === 0, 10_000);
  const other = await b.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY));
  t.equal(other.status, 200, 'the other instance admits: nothing is in flight');
});

t.test('an in-flight entry is a short lease, renewed while its request is in flight, removed when it ends', async (t) => {
  const routes = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    limits: { concurrent_requests: 2 }`);
  const { a, client, mock } = await twoInstances(t, routes, { prompt: 10, completion: 5 }, 12_000);
  const slow = a.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY));
  await until('admitted', () => mock.upstream.requests.length === 1);
  const ttl = await client.pttl(IN_FLIGHT);
  t.ok(ttl > 0 && ttl <= 30_000, `the entry lives 30 s at most unless renewed: ${ttl} ms`);
  const [member, first] = await client.zrange(IN_FLIGHT, '0', '-1', 'WITHSCORES');
  await until('renewed', async () => Number(await client.zscore(IN_FLIGHT, member!)) > Number(first), 20_000);
  t.ok((await client.pttl(IN_FLIGHT)) > 20_000, 'the renewal extends the lease');
  t.equal((await slow).status, 200);
  await until('removed when the answer ended', async () => (await client.zcard(IN_FLIGHT)) === 0, 5000);
});

/** SIGSTOP now, SIGCONT at the end whatever happens (so the server can be killed and the gateways closed). */
function pauseFor(t: Test, redis: RedisServer): void {
  redis.pause();
  t.teardown(() => redis.resume());
}
