import t from 'tap';
import { EndpointBreaker, retryAfterMs } from '../../src/routing/circuit-breaker.js';

// The breaker alone, on a clock the test moves.
function breaker(settings = { consecutiveFailures: 3, cooldownMs: 1000, maxCooldownMs: 5000 }) {
  const clock = { now: 10_000 };
  return { clock, breaker: new EndpointBreaker(settings, () => clock.now) };
}

/** Fails `count` attempts let through while closed. */
function fail(b: EndpointBreaker, count: number): void {
  for (let i = 0; i < count; i++) b.failed(b.admit());
}

t.test('opens after consecutive_failures failures in a row; a success in between resets the count', async (t) => {
  const { breaker: b } = breaker();
  fail(b, 2);
  b.succeeded(b.admit());
  fail(b, 2);
  t.equal(b.state, 'closed');
  t.ok(b.mayTry());
  fail(b, 1);
  t.equal(b.state, 'open');
  t.notOk(b.mayTry());
  t.equal(b.reopensAt, 11_000);
});

t.test('half-open after the cooldown: one probe, the others still avoid it; success closes', async (t) => {
  const { clock, breaker: b } = breaker();
  fail(b, 3);
  clock.now += 999;
  t.notOk(b.mayTry());
  clock.now += 1;
  t.equal(b.state, 'half_open');
  t.ok(b.mayTry());
  const probe = b.admit();
  t.equal(probe, 'probe');
  t.notOk(b.mayTry(), 'one probe at a time');
  b.succeeded(probe);
  t.equal(b.state, 'closed');
  t.ok(b.mayTry());
});

t.test('a failed probe ejects again, the cooldown doubling up to max_cooldown_ms; a success resets the doubling', async (t) => {
  const { clock, breaker: b } = breaker();
  fail(b, 3);
  const cooldowns: number[] = [];
  for (let i = 0; i < 5; i++) {
    const openedAt = clock.now;
    clock.now = b.reopensAt;
    cooldowns.push(clock.now - openedAt);
    b.failed(b.admit());
  }
  t.strictSame(cooldowns, [1000, 2000, 4000, 5000, 5000]);
  clock.now = b.reopensAt;
  b.succeeded(b.admit());
  fail(b, 3);
  t.equal(b.reopensAt - clock.now, 1000, 'back to cooldown_ms after a success');
});

t.test('a probe that says nothing about the endpoint (a 400, the caller left) gives its turn back', async (t) => {
  const { clock, breaker: b } = breaker();
  fail(b, 3);
  clock.now = b.reopensAt;
  b.released(b.admit());
  t.ok(b.mayTry());
  t.equal(b.state, 'half_open');
});

t.test('Retry-After ejects at once until then, capped at max_cooldown_ms', async (t) => {
  const { clock, breaker: b } = breaker();
  b.failed(b.admit(), 2500);
  t.equal(b.state, 'open');
  t.equal(b.reopensAt, clock.now + 2500);
  clock.now = b.reopensAt;
  b.succeeded(b.admit());
  b.failed(b.admit(), 60_000);
  t.equal(b.reopensAt, clock.now + 5000);
});

t.test('attempts from before an ejection change nothing; a forced attempt that succeeds closes it', async (t) => {
  const { breaker: b } = breaker();
  const early = b.admit();
  fail(b, 3);
  const reopensAt = b.reopensAt;
  b.failed(early);
  b.succeeded(early);
  t.equal(b.reopensAt, reopensAt);
  b.failed('forced');
  t.equal(b.reopensAt, reopensAt, 'a forced failure does not extend it');
  b.succeeded('forced');
  t.equal(b.state, 'closed');
});

t.test('retryAfterMs reads retry-after-ms, seconds and HTTP dates', async (t) => {
  const now = Date.parse('2026-11-23T12:00:00Z');
  t.equal(retryAfterMs({ 'retry-after-ms': '1500' }, now), 1500);
  t.equal(retryAfterMs({ 'retry-after': '7' }, now), 7000);
  t.equal(retryAfterMs({ 'retry-after': 'Mon, 23 Nov 2026 12:00:30 GMT' }, now), 30_000);
  t.equal(retryAfterMs({ 'retry-after': 'soon' }, now), undefined);
  t.equal(retryAfterMs({}, now), undefined);
});
