// The official openai client against named callers: the refusals surface as the SDK's own error classes, and a
// caller_rate_limited is retried by the SDK after retry-after, with no code of the caller's.
import OpenAI, { PermissionDeniedError, RateLimitError } from 'openai';
import t from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { HI, SEARCH_KEY, callersRoutes, digestLine, startUsageMock } from '../helpers/callers-routes.js';

function clientFor(origin: string, maxRetries: number) {
  return new OpenAI({ baseURL: `${origin}/v1`, apiKey: SEARCH_KEY, maxRetries });
}

t.test('model not allowed: PermissionDeniedError with the envelope; budget spent: RateLimitError, not retried', async (t) => {
  const routes = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    models: [mock/big]
    budget: { usd_per_day: 1 }`);
  const mock = await startUsageMock({ prompt: 1_000_000, completion: 0 });
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes, upstreamOrigin: mock.upstream.origin });
  t.teardown(() => gateway.close());
  const client = clientFor(gateway.origin, 2);

  const denied = await client.chat.completions.create({ model: 'mock/gpt-4.1-mini', messages: HI as never }).catch((error: unknown) => error);
  t.type(denied, PermissionDeniedError);
  t.equal((denied as PermissionDeniedError).code, 'model_not_allowed');
  t.equal((denied as PermissionDeniedError).param, 'model');

  await client.chat.completions.create({ model: 'mock/big', messages: HI as never }); // 1 USD: the day's budget
  const spent = await client.chat.completions.create({ model: 'mock/big', messages: HI as never }).catch((error: unknown) => error);
  t.type(spent, RateLimitError);
  t.equal((spent as RateLimitError).code, 'insufficient_quota');
  t.equal((spent as RateLimitError).type, 'insufficient_quota');
  t.equal(gateway.requestLogs().filter((line) => line['gateway_code'] === 'quota_exceeded').length, 1, 'x-should-retry: false, so the SDK did not retry');
  t.equal(mock.answered(), 1);
});

t.test('caller_rate_limited: the SDK waits retry-after and retries, and the retry is admitted', async (t) => {
  // 600 tokens per minute refill 10 a second; an answer of 620 tokens leaves the bucket at -20: about 2 s to refill.
  const routes = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    limits: { tokens_per_minute: 600 }`);
  const mock = await startUsageMock({ prompt: 600, completion: 20 });
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes, upstreamOrigin: mock.upstream.origin });
  t.teardown(() => gateway.close());

  await clientFor(gateway.origin, 0).chat.completions.create({ model: 'mock/big', messages: HI as never });
  const bucketEmptied = Date.now();
  const refused = await clientFor(gateway.origin, 0).chat.completions.create({ model: 'mock/big', messages: HI as never }).catch((error: unknown) => error);
  t.type(refused, RateLimitError, 'without retries the SDK surfaces RateLimitError');
  t.equal((refused as RateLimitError).code, 'rate_limit_exceeded');
  t.equal((refused as RateLimitError).type, 'tokens');
  const retryAfter = Number((refused as RateLimitError).headers?.get('retry-after'));
  t.ok(retryAfter >= 1 && retryAfter <= 3, `retry-after ${retryAfter} s`);

  const started = Date.now();
  const completion = await clientFor(gateway.origin, 2).chat.completions.create({ model: 'mock/big', messages: HI as never });
  t.equal(completion.choices[0]?.message.content, 'ok', 'answered after the SDK retried');
  const codes = gateway.requestLogs().map((line) => line['gateway_code']);
  const retried = codes.slice(2);
  t.ok(retried.length >= 1 && retried.at(-1) === null, `the last attempt was served: ${JSON.stringify(retried)}`);
  // Unless this machine took over 1.5 s to get here (the bucket then nearly refilled), the first try was a 429.
  if (started - bucketEmptied < 1500) {
    t.strictSame(retried, ['caller_rate_limited', null], 'refused once, then served');
    t.ok(Date.now() - started >= 900, 'the SDK waited for retry-after before retrying');
  }
  t.equal(mock.answered(), 2);
});
