// A reservation far above the caller's budget or tokens_per_minute (max_tokens 2^53-1 and n 2^53-1: ~1.6e26 USD and
// ~8e31 tokens) was added to the same float as the small reservations in flight and swallowed them: once it settled,
// the counts of the process (the default store, and Redis's fallback) held nothing for the requests still in flight,
// so as many again were admitted. One such request, repeated, walked around the one-reservation overshoot.
// (The tokens bucket held: a bucket still above zero only loses by it. Tested beside the budget as a guard.)
import t from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { HI, SEARCH_KEY, bearer, callersRoutes, digestLine } from '../helpers/callers-routes.js';
import { sendJson, startMockUpstream } from '../helpers/mock-upstream.js';

// mock/big: 2 USD per million output tokens, so max_tokens 100,000 reserves 0.2 USD and a little.
const routes = (limits: string) =>
  callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    models: [mock/big]
${limits}`);
const SMALL = { model: 'mock/big', messages: HI, max_tokens: 100_000 };
const ABSURD = { model: 'mock/big', messages: HI, max_tokens: Number.MAX_SAFE_INTEGER, n: Number.MAX_SAFE_INTEGER };

/** Held answers until `release()`; the absurd request (n > 1) is refused at once, as a provider would. */
async function heldProvider() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let arrived = 0;
  const upstream = await startMockUpstream(async (request, res) => {
    const body = JSON.parse(request.body) as { n?: number };
    if (body.n !== undefined) return sendJson(res, 400, { error: { message: 'n is too large', type: 'invalid_request_error' } });
    arrived++;
    await released;
    sendJson(res, 200, { id: 'c', object: 'chat.completion', created: 1, model: 'big', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
  });
  return { upstream, release, arrived: () => arrived };
}

// A budget does not refill; a tokens bucket of 500,000 a minute refills ~8 tokens a millisecond, so one more request
// may get in on what refilled while the others arrive (still far from the four a freed count would admit).
for (const [what, limits, most] of [
  ['a budget of 1 USD', '    budget: { usd_per_month: 1 }', 1],
  ['tokens_per_minute 500,000', '    limits: { tokens_per_minute: 500000 }', 2],
] as const) {
  t.test(`${what}: an absurd reservation settling first does not free the reservations still in flight`, async (t) => {
    const provider = await heldProvider();
    t.teardown(() => provider.upstream.close());
    const gateway = await startGateway({ routes: routes(limits), upstreamOrigin: provider.upstream.origin });
    t.teardown(() => gateway.close());
    const bearerKey = bearer(SEARCH_KEY);

    // Four in flight: about 0.8 USD, or 400,000 tokens, reserved.
    const held = Array.from({ length: 4 }, () => gateway.post(SMALL, bearerKey));
    await until(() => provider.arrived() === 4);
    const absurd = await gateway.post(ABSURD, bearerKey);
    t.equal(absurd.status, 502, 'admitted (the limit was not reached yet), refused by the provider, settled');
    await absurd.text();

    // The four are still in flight: at most one more is admitted (the one-reservation overshoot), not four more.
    let refused = 0;
    const more = Array.from({ length: 4 }, async () => {
      const answer = await gateway.post(SMALL, bearerKey);
      if (answer.status === 429) refused++;
      return answer;
    });
    await until(() => provider.arrived() - 4 + refused === 4);
    const admitted = provider.arrived() - 4;
    provider.release();
    await Promise.all([...held, ...more].map(async (answer) => (await answer).text()));
    t.ok(admitted <= most, `${admitted} more admitted while four are in flight`);
  });
}

async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 10) {
    if (waited > 10_000) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

t.test('tokens_per_minute 1,000: an absurd max_tokens in flight holds back one minute of tokens, not 10^15 of them', async (t) => {
  const provider = await heldProvider();
  t.teardown(() => provider.upstream.close());
  const gateway = await startGateway({ routes: routes('    limits: { tokens_per_minute: 1000 }'), upstreamOrigin: provider.upstream.origin });
  t.teardown(() => gateway.close());
  const bearerKey = bearer(SEARCH_KEY);

  const absurd = gateway.post({ model: 'mock/big', messages: HI, max_tokens: Number.MAX_SAFE_INTEGER }, bearerKey);
  await until(() => provider.arrived() === 1);
  // The bucket is at zero and refilling: the next request may still get in (the one-reservation overshoot) and
  // hold its own capped reservation; the one after it must wait, and for at most a minute of refill.
  const first = gateway.post(SMALL, bearerKey);
  let firstAnswer: Response | undefined;
  void first.then((answer) => (firstAnswer = answer));
  await until(() => provider.arrived() === 2 || firstAnswer !== undefined);
  const refused = firstAnswer?.status === 429 ? firstAnswer : await gateway.post(SMALL, bearerKey);
  t.equal(refused.status, 429, 'a request waits for the tokens the ones in flight hold');
  const retryAfter = Number(refused.headers.get('retry-after'));
  t.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${refused.headers.get('retry-after')} s: at most the minute that refills the whole limit`);
  t.notMatch(((await refused.json()) as { error: { message: string } }).error.message, /e\+/, 'the message names a plain number of seconds');
  provider.release();
  t.equal((await absurd).status, 200);
  await (await first).text();
});
