// Reservations (README: Callers): a request holds back an estimate of its tokens and cost at admission, so requests
// admitted together pass a budget or a tokens_per_minute limit by at most one reservation, in one process and in Redis.
import { Redis } from 'ioredis';
import t from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { HI, SEARCH_KEY, bearer, callersRoutes, digestLine, startUsageMock } from '../helpers/callers-routes.js';
import { storeUp, until } from './limit-store.js';
import { startRedisServer } from './redis-server.js';

// mock/big costs 1 USD per million input tokens and 2 per million output (callers-routes.ts). Each answer: 1,000
// prompt and 250,000 completion tokens, 0.501 USD; each request names max_tokens 250,000, so it reserves 0.5 USD and
// a little (its body's characters / 4 at the input price). A budget of 2.6 USD then admits six at once.
const BUDGET_USD = 2.6;
const ANSWER_USD = 0.501;
const RESERVED_USD = 0.5001;
const BUDGETED = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    models: [mock/big]
    budget: { usd_per_month: ${BUDGET_USD} }`);

for (const where of ['in the process', 'in Redis'] as const) {
  t.test(`40 parallel streams against a budget ${where}: spend passes it by at most one reservation`, async (t) => {
    const redis = where === 'in Redis' ? await startRedisServer() : undefined;
    if (redis) t.teardown(() => redis.stop());
    const mock = await startUsageMock({ prompt: 1000, completion: 250_000 });
    t.teardown(() => mock.upstream.close());
    const gateway = await startGateway({ routes: BUDGETED, upstreamOrigin: mock.upstream.origin, ...(redis ? { redisUrl: redis.url } : {}) });
    t.teardown(() => gateway.close());
    if (redis) await until('connected', async () => (await storeUp(gateway)) === 1);

    const answers = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const answer = await gateway.post({ model: 'mock/big', messages: HI, stream: true, max_tokens: 250_000 }, bearer(SEARCH_KEY));
        await answer.text();
        return answer.status;
      }),
    );
    const served = answers.filter((status) => status === 200).length;
    t.equal(served + answers.filter((status) => status === 429).length, 40, 'every stream answered or refused');
    t.ok(served >= 1, `the first is always admitted: ${served}`);
    t.ok(served <= Math.floor(BUDGET_USD / RESERVED_USD) + 1, `at most the budget's worth of reservations, and one more: ${served} served`);
    t.equal(mock.answered(), served, 'refused streams never reached the provider');
    const spent = served * ANSWER_USD;
    t.ok(spent <= BUDGET_USD + RESERVED_USD + 1e-9, `spent ${spent.toFixed(3)} USD of ${BUDGET_USD}: over by at most one reservation`);
    if (redis) {
      const client = new Redis(redis.url);
      t.teardown(() => client.disconnect());
      const key = `chat-routing-gateway:{search-team}:usd:${new Date().toISOString().slice(0, 7)}`;
      await until('every settle reached Redis', async () => Math.abs(Number(await client.get(key)) - spent) < 1e-6);
      await until('no reservation left once every stream ended', async () => (await client.exists('chat-routing-gateway:{search-team}:reserved-usd')) === 0);
    }
    const next = await gateway.post({ model: 'mock/big', messages: HI, max_tokens: 10 }, bearer(SEARCH_KEY));
    t.equal(next.status, 429, 'the budget is spent');
  });
}

t.test('30 parallel requests against tokens_per_minute: the tokens used pass it by at most one reservation', async (t) => {
  const routes = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    limits: { tokens_per_minute: 1000 }`);
  // 120 tokens used per answer; each request reserves its body's characters / 4 (about 20) and max_tokens 100.
  const mock = await startUsageMock({ prompt: 20, completion: 100 }, 200);
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes, upstreamOrigin: mock.upstream.origin });
  t.teardown(() => gateway.close());
  const body = { model: 'mock/big', messages: HI, max_tokens: 100 };
  const reserved = Math.ceil(JSON.stringify(body).length / 4) + 100;
  const started = Date.now();
  const answers = await Promise.all(Array.from({ length: 30 }, () => gateway.post(body, bearer(SEARCH_KEY))));
  const refilled = ((Date.now() - started) * 1000) / 60_000;
  const served = answers.filter((answer) => answer.status === 200).length;
  t.equal(served + answers.filter((answer) => answer.status === 429).length, 30);
  const used = served * 120;
  t.ok(used <= 1000 + reserved + refilled, `${used} tokens used of 1000 per minute (${served} served): over by at most one reservation of ${reserved}`);
  const limited = answers.find((answer) => answer.status === 429);
  t.equal(limited?.headers.get('x-ratelimit-remaining-tokens'), '0');
});

t.test('a reservation is given back: one request after another uses the bucket by its real usage', async (t) => {
  const routes = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    limits: { tokens_per_minute: 1000 }`);
  const mock = await startUsageMock({ prompt: 5, completion: 5 });
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes, upstreamOrigin: mock.upstream.origin });
  t.teardown(() => gateway.close());
  // Each reserves 4,096 output tokens (no max_tokens, no max_output_tokens) and uses 10: one after another, all pass.
  for (let i = 0; i < 5; i++) {
    const answer = await gateway.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY));
    t.equal(answer.status, 200, `request ${i + 1}`);
    await answer.text();
  }
});

t.test("what a request reserves: its body's characters / 4, plus max_completion_tokens, else max_tokens, else the model's max_output_tokens, else 4096, times n", async (t) => {
  const routes = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    limits: { tokens_per_minute: 1000000 }`).replace('  mock/unpriced:', '  mock/short: { max_output_tokens: 700 }\n  mock/unpriced:');
  // Answers that use nothing give their whole reservation back: each request is admitted on a full bucket, and its
  // x-ratelimit-remaining-tokens is the bucket less its own reservation.
  const mock = await startUsageMock({ prompt: 0, completion: 0 });
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes, upstreamOrigin: mock.upstream.origin });
  t.teardown(() => gateway.close());
  const cases: [string, Record<string, unknown>, number][] = [
    ['max_completion_tokens before max_tokens, times n', { model: 'mock/big', messages: HI, max_completion_tokens: 300, max_tokens: 9000, n: 2 }, 600],
    ['max_tokens', { model: 'mock/big', messages: HI, max_tokens: 50 }, 50],
    ['neither: 4096', { model: 'mock/big', messages: HI }, 4096],
    ["neither: the model's max_output_tokens", { model: 'mock/short', messages: HI }, 700],
    ["max_tokens above the model's max_output_tokens: the model's", { model: 'mock/short', messages: HI, max_tokens: 5000 }, 700],
  ];
  for (const [what, body, output] of cases) {
    const answer = await gateway.post(body, bearer(SEARCH_KEY));
    await answer.text();
    const reserved = Math.ceil(JSON.stringify(body).length / 4) + output;
    t.equal(answer.headers.get('x-ratelimit-remaining-tokens'), String(1_000_000 - reserved), what);
  }
});
