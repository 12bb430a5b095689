// `npm run review -- --traffic http://prometheus`: each item weighed by what a real Prometheus scraped from a real
// gateway (mock provider, two callers): increase() of the request and cost counters by model and caller.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startGateway } from '../../helpers/gateway.js';
import { HI, bearer, startUsageMock } from '../../helpers/callers-routes.js';
import { startPrometheus } from '../../helpers/prometheus-server.js';
import { EXPECTED, NEW_ROUTES, OLD_ROUTES, TRAFFIC, USAGE, itemOf, review } from './traffic-scenario.js';

t.setTimeout(300_000);

t.test('Prometheus: requests and callers per item, the spend a price change moves, "not called in 7 d"', async (t) => {
  const mock = await startUsageMock(USAGE);
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes: OLD_ROUTES, upstreamOrigin: mock.upstream.origin });
  t.teardown(() => gateway.close());
  const prometheus = await startPrometheus({ targets: [new URL(gateway.origin).host], scrapeIntervalS: 1 });
  t.teardown(() => prometheus.stop());
  const ask = async (key: string, model: string) => {
    const answer = await gateway.post({ model, messages: HI }, bearer(key));
    t.equal(answer.status, 200);
    await answer.text();
  };

  // increase() counts what a series gains once Prometheus has seen it: one request per pair first, scraped, then the traffic.
  for (const [key, model] of TRAFFIC) await ask(key, model);
  await prometheus.waitFor('gateway_requests_total{model!=""}', (result) => result.length === 4 && result.every((each) => each.value === 1));
  for (const [key, model, times] of TRAFFIC) for (let i = 0; i < times; i++) await ask(key, model);
  await prometheus.waitFor('sum(gateway_requests_total{model!=""})', (result) => result[0]?.value === 12);
  // increase() extrapolates up to about 1.6 scrape intervals past the samples: with 35 s of them, under 5 %,
  // so the requests round to the counts sent.
  await prometheus.waitFor('min(count_over_time(gateway_requests_total{model!=""}[1h]))', (result) => (result[0]?.value ?? 0) >= 35, 120_000);

  const dir = mkdtempSync(join(tmpdir(), 'review-traffic-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'old.yaml'), OLD_ROUTES);
  writeFileSync(join(dir, 'new.yaml'), NEW_ROUTES);
  const files = [join(dir, 'old.yaml'), join(dir, 'new.yaml')];
  // Credentials in the URL go as basic auth (this Prometheus ignores them) and are never printed.
  const withCredentials = prometheus.url.replace('http://', 'http://reviewer:s3cret@');

  const json = await review(['--json', ...files, '--traffic', withCredentials]);
  t.equal(json.code, 1, json.stderr);
  t.strictSame(itemOf(json.stdout, 'model_removed', 'mock/gpt-4.1-mini').traffic, EXPECTED.removed, 'a removed routing string: its requests and who sent them');
  t.strictSame(itemOf(json.stdout, 'caller_lost_model', 'mock/big').traffic, EXPECTED.lost, 'a caller losing a model: how often it called it');
  const price = itemOf(json.stdout, 'price_changed', 'mock/big').traffic!;
  t.strictSame({ requests: price.requests, callers: price.callers }, { requests: EXPECTED.price.requests, callers: EXPECTED.price.callers });
  const near = (figure: number | undefined, expected: number) => figure !== undefined && Math.abs(figure - expected) <= expected * 0.06;
  t.ok(near(price.spendUsd, EXPECTED.price.spendUsd), `the window's cost, as Prometheus extrapolates it: ${price.spendUsd}`);
  t.ok(near(price.spendMovedUsd, EXPECTED.price.spendMovedUsd), `the spend moved: ${price.spendMovedUsd}`);
  t.strictSame(itemOf(json.stdout, 'model_repointed', 'mock/unpriced').traffic, { requests: 0, callers: {} });

  const markdown = await review([...files, '--traffic', withCredentials]);
  t.equal(markdown.code, 1, markdown.stderr);
  const rows = markdown.stdout.split('\n');
  t.ok(rows.includes(`Traffic over the last 7 d: \`Prometheus ${prometheus.url}\`.`), markdown.stdout);
  t.ok(rows.some((row) => row.startsWith('| `model_removed` | `mock/gpt-4.1-mini` |') && row.endsWith('| 3 requests: `search-team` 2, `batch-team` 1 |')));
  t.ok(rows.some((row) => row.startsWith('| `model_repointed` | `mock/unpriced` |') && row.endsWith('| not called in 7 d |')));
  t.notMatch(markdown.stdout + markdown.stderr + json.stdout, /s3cret/);

  await prometheus.stop();
  const down = await review([...files, '--traffic', withCredentials]);
  t.equal(down.code, 1, 'the verdict stands without traffic');
  t.match(down.stderr, new RegExp(`^review: traffic not available: Prometheus ${prometheus.url.replace(/\./g, '\\.')}: `));
  t.notMatch(down.stdout + down.stderr, /s3cret/);
});
