// deploy/prometheus/alerts.yaml: promtool checks it and runs its unit tests (alerts.test.yaml), every alert says
// what to do, the Prometheus Operator copy (deploy/kubernetes/monitoring/) holds the same rules and loads in a real
// Prometheus, and the ServiceMonitor scrapes the Service the deployment ships. test/process/dashboard-alerts-process.test.ts
// evaluates the same expressions against a real gateway.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { parse } from 'yaml';
import { startPrometheus } from '../helpers/prometheus-server.js';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const RULES_DIR = join(repoRoot, 'deploy/prometheus');
const readYaml = (path: string) => parse(readFileSync(join(repoRoot, path), 'utf8')) as Record<string, unknown>;

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rules = (readYaml('deploy/prometheus/alerts.yaml') as { groups: { name: string; rules: Rule[] }[] }).groups.flatMap((group) => group.rules);

/** The alerts issue 37 asks for, each by its name in alerts.yaml. */
const WANTED = [
  'GatewayProviderErrorRatioHigh',
  'GatewayEndpointBreakerOpen',
  'GatewayProviderAllEndpointsOpen',
  'GatewayLimitStoreDown',
  'GatewayCallerBudget80Percent',
  'GatewayCallerBudgetExhausted',
  'GatewayDeprecatedModelCalledNearSunset',
  'GatewayLogLinesDropped',
  'GatewaySpansDropped',
  'GatewayNoRequests',
];

t.test('alerts.yaml holds the alerts asked for, each with a severity, a summary and a description that says what to do', async (t) => {
  t.same(rules.map((rule) => rule.alert).sort(), [...WANTED].sort());
  for (const rule of rules) {
    t.match(rule.labels?.['severity'], /^(warning|critical)$/, `${rule.alert}: severity`);
    t.ok((rule.annotations?.['summary'] ?? '').length > 10, `${rule.alert}: summary`);
    // A description that only restates the condition is no help at 3 a.m.: each names something to check or do.
    t.match(rule.annotations?.['description'] ?? '', /\b(check|look|tell|ask|restore|raise|fix|silence)\b/i, `${rule.alert}: description says what to do`);
  }
});

t.test('promtool check rules passes on alerts.yaml', async (t) => {
  const { stdout } = await run('promtool', ['check', 'rules', 'alerts.yaml'], { cwd: RULES_DIR });
  t.match(stdout, `SUCCESS: ${rules.length} rules found`);
});

t.test('promtool test rules: each alert fires on its synthetic series and stays quiet on the others', async (t) => {
  const tests = (readYaml('deploy/prometheus/alerts.test.yaml') as { tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[] }).tests.flatMap((each) => each.alert_rule_test);
  // Every alert has a case where it fires; promtool compares the whole list, so the series beside it prove the quiet.
  t.same(WANTED.filter((name) => !tests.some((each) => each.alertname === name && each.exp_alerts.length > 0)), [], 'alerts without a firing case');
  const result = await run('promtool', ['test', 'rules', 'alerts.test.yaml'], { cwd: RULES_DIR }).catch((error: { stdout: string; stderr: string }) => error);
  t.match(result.stdout + result.stderr, /SUCCESS/, result.stdout + result.stderr);
});

t.test('the PrometheusRule holds exactly the groups of alerts.yaml, and a real Prometheus loads them healthy', async (t) => {
  const manifest = readYaml('deploy/kubernetes/monitoring/prometheus-rule.yaml') as { apiVersion: string; kind: string; metadata: { name: string }; spec: unknown };
  t.equal(manifest.apiVersion, 'monitoring.coreos.com/v1');
  t.equal(manifest.kind, 'PrometheusRule');
  t.same(manifest.spec, readYaml('deploy/prometheus/alerts.yaml'), 'edit alerts.yaml, then copy its groups under spec: in prometheus-rule.yaml');

  const dir = mkdtempSync(join(tmpdir(), 'gateway-rules-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'rules.yaml'), JSON.stringify(manifest.spec));
  const prometheus = await startPrometheus({ targets: [], ruleFiles: [join(dir, 'rules.yaml')] });
  t.teardown(() => prometheus.stop());
  // Rules are evaluated once per interval after start: wait for every one to have been evaluated once.
  const groups = await waitForEvaluation(prometheus);
  const loaded = groups.flatMap((group) => group.rules);
  t.same(loaded.map((rule) => rule.name).sort(), [...WANTED].sort());
  t.same(loaded.filter((rule) => rule.health !== 'ok').map((rule) => `${rule.name}: ${rule.health} ${rule.lastError ?? ''}`), []);
});

t.test('the ServiceMonitor scrapes /metrics on a port the Service names, of the pods the Service selects', async (t) => {
  const monitor = readYaml('deploy/kubernetes/monitoring/service-monitor.yaml') as {
    kind: string;
    spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string; path: string }[] };
  };
  const service = readYaml('deploy/kubernetes/service.yaml') as { metadata: { labels: Record<string, string> }; spec: { ports: { name: string }[] } };
  t.equal(monitor.kind, 'ServiceMonitor');
  for (const [key, value] of Object.entries(monitor.spec.selector.matchLabels)) t.equal(service.metadata.labels[key], value, `the Service has ${key}=${value}`);
  for (const endpoint of monitor.spec.endpoints) {
    t.ok(service.spec.ports.some((port) => port.name === endpoint.port), `the Service names port ${endpoint.port}`);
    t.equal(endpoint.path, '/metrics');
  }
});

interface LoadedGroup {
  rules: { name: string; health: string; lastError?: string; lastEvaluation: string }[];
}

async function waitForEvaluation(prometheus: { api<T>(path: string): Promise<T> }): Promise<LoadedGroup[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { groups } = await prometheus.api<{ groups: LoadedGroup[] }>('/api/v1/rules');
    const rulesSeen = groups.flatMap((group) => group.rules);
    if (rulesSeen.length > 0 && rulesSeen.every((rule) => !rule.lastEvaluation.startsWith('0001-'))) return groups;
    if (Date.now() > deadline) throw new Error(`rules not evaluated within 30 s: ${JSON.stringify(groups)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
