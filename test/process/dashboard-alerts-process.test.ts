// Every query of deploy/grafana/gateway-dashboard.json and every expression of deploy/prometheus/alerts.yaml,
// evaluated by a real Prometheus scraping a real gateway process (dist/server.js on this test's routes.yaml, with
// Redis, OpenTelemetry, callers with a budget and a rate limit, a two-endpoint provider that fails over, a provider
// that is down and a deprecated model) after it served traffic through mock providers: each parses, names only
// series and labels that exist, and those the traffic exercises return data. One gateway, one Prometheus, shared.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { compileRoutes } from '../../scripts/routes/compile-routes.js';
import { BATCH_KEY, SEARCH_KEY, bearer, digestLine, startUsageMock } from '../helpers/callers-routes.js';
import { alertRules, dashboardQueries, labelNames, metricNames, readDashboard, variableQueries } from '../helpers/dashboard-queries.js';
import { sendJson, startMockUpstream } from '../helpers/mock-upstream.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { startPrometheus, type PromSample } from '../helpers/prometheus-server.js';
import { startRedisServer } from '../policy/redis-server.js';
import { startServerProcess } from './server-process.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const OPS_KEY = 'gw-ops-team-key-for-tests-5555555555';
const DAY_MS = 86_400_000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

// Each answer reports 200 + 50 tokens: 0.025 USD at 100 USD per million. search's day budget (0.06) is spent
// after three answers (0.075, 125%); its month budget (0.09) is then 83% spent.
const ROUTES = `version: 1
providers:
  pool:
    endpoints:
      - { name: east, base_url: http://127.0.0.1:9/v1, base_url_env: EAST_URL, api_key_env: PROVIDER_KEY, weight: 100 }
      - { name: west, base_url: http://127.0.0.1:9/v1, base_url_env: WEST_URL, api_key_env: PROVIDER_KEY }
  down: { base_url: http://127.0.0.1:9/v1, base_url_env: DOWN_URL, api_key_env: PROVIDER_KEY }
models:
  down/model: { price: { input_per_mtok: 100, output_per_mtok: 100 } }
  pool/main: { price: { input_per_mtok: 100, output_per_mtok: 100 } }
  pool/old: { price: { input_per_mtok: 100, output_per_mtok: 100 }, deprecated: { since: ${isoDay(Date.now() - DAY_MS)}, sunset: ${isoDay(Date.now() + 7 * DAY_MS)}, replacement: pool/main } }
defaults: { max_attempts: 3, breaker: { consecutive_failures: 1, cooldown_ms: 600000, max_cooldown_ms: 600000 } }
callers:
  search:
    keys: [${digestLine(SEARCH_KEY)}]
    budget: { usd_per_day: 0.06, usd_per_month: 0.09 }
  batch:
    keys: [${digestLine(BATCH_KEY)}]
    limits: { requests_per_minute: 3 }
  ops:
    key_env: OPS_KEYS
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

const compiled = compileRoutes(ROUTES);
if (!compiled.ok) throw new Error(`test routes do not compile: ${JSON.stringify(compiled.problems)}`);
// dist/ as npm run build leaves it, with this test's tables where the build writes routes.yaml's: under
// node_modules/ so that the copy resolves its packages from there.
mkdirSync(join(repoRoot, 'node_modules/.cache'), { recursive: true });
const build = mkdtempSync(join(repoRoot, 'node_modules/.cache/gateway-dist-'));
t.teardown(() => rmSync(build, { recursive: true, force: true }));
cpSync(join(repoRoot, 'dist'), build, { recursive: true });
writeFileSync(join(build, 'generated/routes.js'), `export const GATEWAY_VERSION = "0.0.0-test";\nexport const routeTables = ${JSON.stringify(compiled.tables)};\n`);

const [healthy, failing, redis, collector] = await Promise.all([
  startUsageMock({ prompt: 200, completion: 50 }),
  startMockUpstream((_request, res) => sendJson(res, 503, { error: { message: 'down for the test', type: 'server_error' } })),
  startRedisServer(),
  startOtlpReceiver(),
]);
t.teardown(() => Promise.all([healthy.upstream.close(), failing.close(), redis.stop(), collector.close()]));
const gateway = await startServerProcess(
  {
    PROVIDER_KEY: 'sk-provider-key-for-tests',
    EAST_URL: `${failing.origin}/v1`,
    WEST_URL: `${healthy.upstream.origin}/v1`,
    DOWN_URL: `${failing.origin}/v1`,
    OPS_KEYS: OPS_KEY,
    REDIS_URL: redis.url,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.origin}/v1/traces`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_METRICS_EXPORTER: 'none',
    AWS_EC2_METADATA_DISABLED: 'true',
  },
  [join(build, 'server.js')],
);
t.teardown(async () => {
  gateway.child.kill('SIGKILL');
  await gateway.exited;
});
// Should the test crash before its teardown, the gateway and the copy of dist/ go with it.
process.once('exit', () => {
  gateway.child.kill('SIGKILL');
  rmSync(build, { recursive: true, force: true });
});
const prometheus = await startPrometheus({ targets: [new URL(gateway.origin).host], ruleFiles: [join(repoRoot, 'deploy/prometheus/alerts.yaml')] });
t.teardown(() => prometheus.stop());

const chat = (key: string | null, model: string, stream = false) =>
  fetch(`${gateway.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? bearer(key) : {}) },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5, stream }),
  }).then(async (response) => ({ status: response.status, text: await response.text() }));

/** One round of traffic; run twice, so that every counter has grown between two scrapes and rate() sees it. */
async function traffic(): Promise<number[]> {
  const statuses: number[] = [];
  const send = async (key: string | null, model: string, stream = false) => statuses.push((await chat(key, model, stream)).status);
  await send(null, 'pool/main');
  await send(BATCH_KEY, 'nowhere/model');
  for (let i = 0; i < 4; i++) await send(BATCH_KEY, 'pool/main');
  for (let i = 0; i < 4; i++) await send(SEARCH_KEY, 'pool/main');
  for (let i = 0; i < 3; i++) await send(OPS_KEY, 'pool/main');
  for (let i = 0; i < 2; i++) await send(OPS_KEY, 'pool/main', true);
  for (let i = 0; i < 2; i++) await send(OPS_KEY, 'pool/old');
  await Promise.all(Array.from({ length: 40 }, () => send(OPS_KEY, 'down/model')));
  return statuses;
}

/** Waits until Prometheus has scraped every request the gateway has counted so far (a line may land just after its answer). */
async function scraped(): Promise<void> {
  const exposition = await (await fetch(`${gateway.origin}/metrics`)).text();
  const counted = [...exposition.matchAll(/^gateway_requests_total\{[^}]*\} (\S+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
  await prometheus.waitFor('sum(gateway_requests_total)', (result) => (result[0]?.value ?? 0) >= counted);
}

const first = await traffic();
await scraped();
await traffic();
await scraped();

const finite = (result: PromSample[]) => result.some((sample) => Number.isFinite(sample.value));
const exposition = await (await fetch(`${gateway.origin}/metrics`)).text();
const exported = new Set((await prometheus.api<string[]>('/api/v1/label/__name__/values')).filter((name) => !name.startsWith('scrape_') && name !== 'up' && name !== 'ALERTS' && name !== 'ALERTS_FOR_STATE'));
const labelsOf = new Map<string, Set<string>>();
for (const name of exported) {
  const series = await prometheus.api<Record<string, string>[]>('/api/v1/series', { 'match[]': name });
  labelsOf.set(name, new Set(series.flatMap((each) => Object.keys(each))));
}

t.test('the traffic took every path the panels and alerts look at', async (t) => {
  t.ok(first.includes(401), 'a request without a key');
  t.ok(first.includes(400), 'an off-roster model');
  t.ok(first.includes(429), 'refusals: a rate limit and a budget');
  t.ok(first.includes(200), 'answers, after failing over from east');
  t.ok(first.filter((status) => status >= 500).length >= 40, 'every request to the provider that is down is a 5xx');
  t.match(exposition, /gateway_upstream_attempts_total\{provider="pool",endpoint="east",outcome="503"\}/, 'east failed and the request failed over');
});

t.test('every dashboard query and alert expression names only metrics and labels the scrape holds', async (t) => {
  const queries = [...dashboardQueries(readDashboard()), ...alertRules().map((rule) => ({ name: `alert ${rule.alert}`, expr: rule.expr }))];
  for (const { name, expr } of queries) {
    const metrics = metricNames(expr);
    t.ok(metrics.length > 0, `${name}: reads a metric`);
    t.same(metrics.filter((metric) => !exported.has(metric)), [], `${name}: metrics the gateway exports`);
    const known = new Set(metrics.flatMap((metric) => [...(labelsOf.get(metric) ?? [])]));
    t.same(labelNames(expr).filter((label) => !known.has(label)), [], `${name}: labels those metrics carry`);
  }
});

t.test('every dashboard query parses and returns data', async (t) => {
  for (const { name, expr } of dashboardQueries(readDashboard())) {
    const result = await prometheus.query(expr).catch((error: Error) => error);
    if (result instanceof Error) {
      t.fail(`${name}: ${result.message}`);
      continue;
    }
    t.ok(finite(result), `${name}: data`, { expr, result });
  }
});

t.test('every gateway metric the scrape holds is on the dashboard', async (t) => {
  const onDashboard = new Set(dashboardQueries(readDashboard()).flatMap(({ expr }) => metricNames(expr)));
  const families = [...exposition.matchAll(/^# TYPE (gateway_\S+) (\S+)$/gm)].map((match) => (match[2] === 'histogram' ? `${match[1]}_bucket` : match[1]!));
  t.same(families.filter((family) => !onDashboard.has(family)), []);
});

t.test('the model, provider and caller variables list what the traffic used', async (t) => {
  const values = new Map<string, string[]>();
  for (const variable of variableQueries(readDashboard())) values.set(variable.name, await prometheus.api<string[]>(`/api/v1/label/${variable.label}/values`, { 'match[]': variable.metric }));
  t.same(values.get('instance'), [new URL(gateway.origin).host]);
  t.ok(['pool/main', 'pool/old', 'down/model'].every((model) => values.get('model')?.includes(model)), `models: ${values.get('model')}`);
  t.ok(['pool', 'down'].every((provider) => values.get('provider')?.includes(provider)), `providers: ${values.get('provider')}`);
  t.ok(['search', 'batch', 'ops'].every((caller) => values.get('caller')?.includes(caller)), `callers: ${values.get('caller')}`);
});

// What each alert's expression returns on this traffic: data where the scenario is the alert's case, none where not.
const ALERT_CASES: Record<string, ((result: PromSample[]) => boolean) | 'quiet'> = {
  GatewayProviderErrorRatioHigh: (result) => result.some((each) => each.metric['provider'] === 'down') && result.every((each) => each.metric['provider'] === 'down'),
  GatewayEndpointBreakerOpen: (result) => ['pool/east', 'down/0'].every((endpoint) => result.some((each) => `${each.metric['provider']}/${each.metric['endpoint']}` === endpoint)) && result.length === 2,
  GatewayProviderAllEndpointsOpen: (result) => result.length === 1 && result[0]!.metric['provider'] === 'down',
  GatewayLimitStoreDown: 'quiet',
  GatewayCallerBudget80Percent: (result) => result.length === 1 && result[0]!.metric['caller'] === 'search' && result[0]!.metric['period'] === 'month',
  GatewayCallerBudgetExhausted: (result) => result.length === 1 && result[0]!.metric['caller'] === 'search' && result[0]!.metric['period'] === 'day',
  GatewayDeprecatedModelCalledNearSunset: (result) => result.length === 1 && result[0]!.metric['model'] === 'pool/old' && result[0]!.metric['caller'] === 'ops',
  GatewayLogLinesDropped: 'quiet',
  GatewaySpansDropped: 'quiet',
  GatewayNoRequests: 'quiet',
};

t.test('every alert expression parses, and returns data exactly where the traffic is its case', async (t) => {
  t.same(alertRules().map((rule) => rule.alert).sort(), Object.keys(ALERT_CASES).sort());
  for (const rule of alertRules()) {
    const result = await prometheus.query(rule.expr).catch((error: Error) => error);
    if (result instanceof Error) {
      t.fail(`${rule.alert}: ${result.message}`);
      continue;
    }
    const expected = ALERT_CASES[rule.alert]!;
    if (expected === 'quiet') t.same(result, [], `${rule.alert}: quiet`);
    else t.ok(expected(result), `${rule.alert}: fires for the scenario's case`, { result });
  }
});

t.test('Prometheus evaluates the loaded rules without error: an alert without `for` fires, one with `for` is on its way', async (t) => {
  await prometheus.waitFor('ALERTS{alertname="GatewayDeprecatedModelCalledNearSunset", alertstate="firing"}', (result) => result.length === 1);
  await prometheus.waitFor('ALERTS{alertname="GatewayProviderAllEndpointsOpen", alertstate=~"pending|firing"}', (result) => result.length === 1);
  const { groups } = await prometheus.api<{ groups: { rules: { name: string; health: string; lastError?: string }[] }[] }>('/api/v1/rules');
  const loaded = groups.flatMap((group) => group.rules);
  t.equal(loaded.length, alertRules().length);
  t.same(loaded.filter((rule) => rule.health !== 'ok').map((rule) => `${rule.name}: ${rule.lastError}`), []);
});
