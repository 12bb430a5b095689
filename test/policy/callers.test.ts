// Named callers (routes.yaml callers:) in one process: who a key is, which models it may use, its limits and budget,
// and what the log line and /metrics say of it. Real YAML, the real compiler, a real mock provider.
import t from 'tap';
import { envelopeOf, startGateway } from '../helpers/gateway.js';
import { BATCH_KEY, HI, SEARCH_KEY, bearer, callersRoutes, digestLine, startUsageMock } from '../helpers/callers-routes.js';
import { parseExposition, valueOf } from '../helpers/prometheus.js';

const TWO_CALLERS = callersRoutes(`  batch-team:
    key_env: BATCH_TEAM_KEYS
    models: [mock/gpt-4.1-mini]
  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    models: ["mock/*"]
    limits: { requests_per_minute: 5 }`);

t.test('a key names its caller; a caller reaches only its models (403 after the roster check)', async (t) => {
  const mock = await startUsageMock();
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes: TWO_CALLERS, upstreamOrigin: mock.upstream.origin, env: { BATCH_TEAM_KEYS: ` other-key , ${BATCH_KEY}` } });
  t.teardown(() => gateway.close());

  t.equal((await gateway.post({ model: 'mock/gpt-4.1-mini', messages: HI })).status, 401, 'no key');
  t.equal((await gateway.post({ model: 'mock/gpt-4.1-mini', messages: HI }, bearer('not-a-key'))).status, 401, 'unknown key');
  t.equal((await gateway.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY))).status, 200, 'search-team: a model its pattern matches');
  t.equal((await gateway.post({ model: 'mock/gpt-4.1-mini', messages: HI }, bearer(BATCH_KEY))).status, 200, 'batch-team: a key from key_env');

  const refused = await gateway.post({ model: 'mock/big', messages: HI }, bearer(BATCH_KEY));
  t.equal(refused.status, 403);
  t.equal(refused.headers.get('x-should-retry'), 'false');
  const envelope = await envelopeOf(refused);
  t.strictSame(envelope, {
    message: envelope['message'],
    type: 'permission_error',
    code: 'model_not_allowed',
    param: 'model',
    origin: 'gateway',
    gateway_code: 'model_not_allowed',
    provider: null,
    provider_status: null,
    provider_code: null,
  });
  t.match(envelope['message'], /"batch-team".*"mock\/big"/, 'names the caller and the model');
  t.notMatch(envelope['message'], BATCH_KEY, 'never the key');
  const offRoster = await gateway.post({ model: 'mock/nope', messages: HI }, bearer(BATCH_KEY));
  t.equal(offRoster.status, 400, 'off the roster: the 400 of every caller, before the allowed models');
  t.equal((await envelopeOf(offRoster))['gateway_code'], 'unknown_model');
  t.equal(mock.answered(), 2, 'the provider saw only the allowed requests');

  const logs = gateway.requestLogs();
  t.strictSame(logs.map((line) => line['caller']), [null, null, 'search-team', 'batch-team', 'batch-team', 'batch-team']);
  t.notMatch(gateway.logLines.join('\n'), new RegExp(`${SEARCH_KEY}|${BATCH_KEY}`), 'no key in any log line');
});

t.test('requests_per_minute: exactly the bucket, then 429 caller_rate_limited with retry-after and the x-ratelimit headers', async (t) => {
  const mock = await startUsageMock();
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes: TWO_CALLERS, upstreamOrigin: mock.upstream.origin, env: { BATCH_TEAM_KEYS: BATCH_KEY } });
  t.teardown(() => gateway.close());
  // 5 per minute refills one request every 12 s: the six requests below are sent well within that.
  const answers = await Promise.all(Array.from({ length: 6 }, () => gateway.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY))));
  const statuses = answers.map((answer) => answer.status).sort();
  t.strictSame(statuses, [200, 200, 200, 200, 200, 429]);
  const ok = answers.find((answer) => answer.status === 200)!;
  t.equal(ok.headers.get('x-ratelimit-limit-requests'), '5');
  t.match(ok.headers.get('x-ratelimit-remaining-requests'), /^[0-4]$/);
  t.match(ok.headers.get('x-ratelimit-reset-requests'), /^\d+(\.\d+)?(ms|s)$|^\d+m[\d.]+s$/);
  t.equal(ok.headers.get('x-ratelimit-limit-tokens'), null, 'no token limit, no token headers');
  const limited = answers.find((answer) => answer.status === 429)!;
  t.equal(limited.headers.get('x-should-retry'), 'true');
  t.equal(limited.headers.get('x-ratelimit-remaining-requests'), '0');
  const retryAfter = Number(limited.headers.get('retry-after'));
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 12, `retry-after in whole seconds: ${retryAfter}`);
  const envelope = await envelopeOf(limited);
  t.match(envelope, { type: 'requests', code: 'rate_limit_exceeded', gateway_code: 'caller_rate_limited', origin: 'gateway', param: null, provider: null });
  t.equal(mock.answered(), 5, 'the refused request never reached the provider');
  // Another caller has its own counts (and none here).
  t.equal((await gateway.post({ model: 'mock/gpt-4.1-mini', messages: HI }, bearer(BATCH_KEY))).status, 200);
});

t.test('tokens_per_minute: a stream reserves at admission and takes its usage when it ends; the bucket below zero holds the next request', async (t) => {
  const routes = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    limits: { tokens_per_minute: 1000 }`);
  // 1,500 tokens per answer: the first answer takes the bucket to -500, which takes 30 s to refill above zero.
  const mock = await startUsageMock({ prompt: 1200, completion: 300 });
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes, upstreamOrigin: mock.upstream.origin });
  t.teardown(() => gateway.close());
  const first = await gateway.post({ model: 'mock/big', messages: HI, stream: true }, bearer(SEARCH_KEY));
  t.equal(first.status, 200);
  t.equal(first.headers.get('x-ratelimit-limit-tokens'), '1000');
  t.equal(first.headers.get('x-ratelimit-remaining-tokens'), '0', 'admitted on a full bucket, which its reservation (4,096 output tokens without max_tokens) takes below zero');
  await first.text();
  const second = await gateway.post({ model: 'mock/big', messages: HI, stream: true }, bearer(SEARCH_KEY));
  t.equal(second.status, 429);
  t.equal(second.headers.get('x-ratelimit-remaining-tokens'), '0');
  const retryAfter = Number(second.headers.get('retry-after'));
  t.ok(retryAfter >= 20 && retryAfter <= 31, `until the bucket is above zero again: ${retryAfter} s`);
  t.match(await envelopeOf(second), { type: 'tokens', code: 'rate_limit_exceeded', gateway_code: 'caller_rate_limited' });
  t.equal(mock.answered(), 1);
});

t.test('concurrent_requests: requests in flight at once, with slow providers; a slot frees when its answer ends', async (t) => {
  const routes = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    limits: { concurrent_requests: 2 }`);
  const mock = await startUsageMock({ prompt: 1, completion: 1 }, 1500);
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes, upstreamOrigin: mock.upstream.origin });
  t.teardown(() => gateway.close());
  const slow = [gateway.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY)), gateway.post({ model: 'mock/big', messages: HI, stream: true }, bearer(SEARCH_KEY))];
  while (mock.upstream.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  const third = await gateway.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY));
  t.equal(third.status, 429, 'a third while two are in flight');
  t.equal(third.headers.get('retry-after'), '1');
  t.match(await envelopeOf(third), { type: 'requests', gateway_code: 'caller_rate_limited' });
  for (const answer of await Promise.all(slow)) {
    t.equal(answer.status, 200);
    await answer.text();
  }
  t.equal((await gateway.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY))).status, 200, 'admitted once they ended');
  t.equal(mock.upstream.requests.length, 3);
});

t.test('budget: every answer is priced; reached mid-run, the next request is 429 insufficient_quota; cost in the log line and /metrics', async (t) => {
  const routes = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    models: [mock/big]
    budget: { usd_per_month: 2.5 }`);
  // 1,000,000 prompt tokens (200,000 of them cached) and 250,000 completion tokens: 0.8 + 0.1 + 0.5 = 1.4 USD per answer.
  const mock = await startUsageMock({ prompt: 1_000_000, completion: 250_000, cached: 200_000 });
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes, upstreamOrigin: mock.upstream.origin });
  t.teardown(() => gateway.close());
  t.match(gateway.warnings, [/spend is lost on restart/], 'without REDIS_URL a start-up warning says the spend is in the process');
  t.equal((await gateway.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY))).status, 200, '1.4 USD spent');
  const stream = await gateway.post({ model: 'mock/big', messages: HI, stream: true }, bearer(SEARCH_KEY));
  t.equal(stream.status, 200, 'admitted under the budget; charged when it ends (2.8 USD: requests in flight may overshoot)');
  await stream.text();
  const over = await gateway.post({ model: 'mock/big', messages: HI }, bearer(SEARCH_KEY));
  t.equal(over.status, 429);
  t.equal(over.headers.get('x-should-retry'), 'false');
  const envelope = await envelopeOf(over);
  t.match(envelope, { type: 'insufficient_quota', code: 'insufficient_quota', gateway_code: 'quota_exceeded', origin: 'gateway', provider: null, provider_status: null });
  t.match(envelope['message'], /search-team.*2\.5 USD per UTC month/);
  t.equal(mock.answered(), 2);

  const logs = gateway.requestLogs();
  t.strictSame(logs.map((line) => line['cost_usd']), [1.4, 1.4, null]);
  t.strictSame(logs.map((line) => line['caller']), ['search-team', 'search-team', 'search-team']);
  const samples = parseExposition(await (await fetch(`${gateway.origin}/metrics`)).text());
  t.equal(valueOf(samples, 'gateway_cost_usd_total', { caller: 'search-team', model: 'mock/big' }), 2.8);
  t.equal(valueOf(samples, 'gateway_requests_total', { model: '', provider: '', status: '429', gateway_code: 'quota_exceeded', caller: 'search-team' }), 1, 'refused before any provider: no model or provider label, as today');
  t.equal(valueOf(samples, 'gateway_limit_store_up'), undefined, 'no Redis, no store gauge');
});

t.test('without callers: the log line says anonymous (no keys) or key (GATEWAY_API_KEYS)', async (t) => {
  const mock = await startUsageMock();
  t.teardown(() => mock.upstream.close());
  const anonymous = await startGateway({ upstreamOrigin: mock.upstream.origin });
  t.teardown(() => anonymous.close());
  await (await anonymous.post({ model: 'mock/gpt-4o', messages: HI })).text();
  t.equal(anonymous.requestLogs()[0]!['caller'], 'anonymous');
  t.equal(anonymous.requestLogs()[0]!['cost_usd'], null, 'no price, no cost');
  const keyed = await startGateway({ upstreamOrigin: mock.upstream.origin, callerKeys: ['flat-key'] });
  t.teardown(() => keyed.close());
  await (await keyed.post({ model: 'mock/gpt-4o', messages: HI }, bearer('flat-key'))).text();
  t.equal(keyed.requestLogs()[0]!['caller'], 'key');
});

t.test('start-up refusals: callers and GATEWAY_API_KEYS together; one key under two callers', async (t) => {
  await t.rejects(startGateway({ routes: TWO_CALLERS, callerKeys: ['flat-key'] }), /declares callers and GATEWAY_API_KEYS/);
  const twoEnvs = callersRoutes(`  a:
    key_env: A_KEYS
  b:
    key_env: B_KEYS`);
  await t.rejects(startGateway({ routes: twoEnvs, env: { A_KEYS: 'shared-key', B_KEYS: 'shared-key' } }), /key of caller "b" \(B_KEYS\) is also a key of caller "a"/);
  const envAndDigest = callersRoutes(`  a:
    keys: [${digestLine(SEARCH_KEY)}]
  b:
    key_env: B_KEYS`);
  await t.rejects(startGateway({ routes: envAndDigest, env: { B_KEYS: SEARCH_KEY } }), /also a key of caller "a"/);
});
