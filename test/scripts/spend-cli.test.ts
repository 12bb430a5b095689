// `npm run --silent spend`: the budgeted callers' spend today and this month, their budgets and what is left, read
// from a real redis-server a real gateway counted in, or from a gateway's /metrics when it counts in its memory;
// agreeing with what the requests cost (gateway_cost_usd_total) and with the gauges.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { BATCH_KEY, BUDGETED_ROUTES, DOLLAR_FORTY_USAGE, HI, OTHER_KEY, SEARCH_KEY, bearer, startUsageMock } from '../helpers/callers-routes.js';
import { parseExposition, valueOf } from '../helpers/prometheus.js';
import { gatewayOnRedis } from '../policy/limit-store.js';
import { startRedisServer } from '../policy/redis-server.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const spendScript = join(repoRoot, 'scripts/spend.ts');
const tsxLoader = import.meta.resolve('tsx');
t.setTimeout(240_000);

// search-team's day budget lowered to 5 USD, so what is left of it is small.
const ROUTES = BUDGETED_ROUTES.replace('usd_per_day: 10', 'usd_per_day: 5');
const USAGE = DOLLAR_FORTY_USAGE;

function spend(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { REDIS_URL: _ignored, ...inherited } = process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', tsxLoader, spendScript, ...args], { cwd: repoRoot, timeout: 60_000, env: { ...inherited, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

async function traffic(t: Test, gateway: RunningGateway): Promise<void> {
  for (const [key, times] of [[SEARCH_KEY, 3], [BATCH_KEY, 1], [OTHER_KEY, 1]] as const) {
    for (let i = 0; i < times; i++) {
      const answer = await gateway.post({ model: 'mock/big', messages: HI }, bearer(key));
      t.equal(answer.status, 200);
      await answer.text();
    }
  }
  await gateway.logged(() => (gateway.requestLogs().length >= 5 ? true : undefined));
}

async function costOf(gateway: RunningGateway, caller: string): Promise<number> {
  return valueOf(parseExposition(await (await fetch(`${gateway.origin}/metrics`)).text()), 'gateway_cost_usd_total', { caller, model: 'mock/big' }) ?? 0;
}

const EXPECTED = [
  { caller: 'batch-team', day: { spentUsd: 1.4, budgetUsd: null, leftUsd: null }, month: { spentUsd: 1.4, budgetUsd: 50, leftUsd: 48.6 } },
  { caller: 'search-team', day: { spentUsd: 4.2, budgetUsd: 5, leftUsd: 0.8 }, month: { spentUsd: 4.2, budgetUsd: 100, leftUsd: 95.8 } },
];

t.test('REDIS_URL: read from Redis for the callers of routes.yaml, as JSON and as a table', async (t) => {
  const { gateway, redis } = await gatewayOnRedis(t, ROUTES, USAGE);
  await traffic(t, gateway);
  const dir = mkdtempSync(join(tmpdir(), 'spend-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const routesFile = join(dir, 'routes.yaml');
  writeFileSync(routesFile, ROUTES);

  const json = await spend(['--json', '--routes', routesFile], { REDIS_URL: redis.url });
  t.equal(json.code, 0, json.stderr);
  const report = JSON.parse(json.stdout) as { source: string; store: string; day: string; month: string; callers: typeof EXPECTED; unbudgeted: string[] };
  t.match(report, { source: 'redis', store: 'redis', day: new Date().toISOString().slice(0, 10), month: new Date().toISOString().slice(0, 7), unbudgeted: ['other-team'] });
  t.strictSame(report.callers, EXPECTED);
  t.equal(report.callers[1]!.month.spentUsd, Math.round((await costOf(gateway, 'search-team')) * 1e8) / 1e8, 'agrees with the counted cost');

  const table = await spend(['--routes', routesFile], { REDIS_URL: redis.url });
  t.equal(table.code, 0, table.stderr);
  const lines = table.stdout.split('\n');
  t.match(lines[0], /^Spend in UTC day \d{4}-\d\d-\d\d and month \d{4}-\d\d, from Redis \(REDIS_URL\)$/);
  t.match(lines[2], /^caller\s+today\s+day budget\s+day left\s+this month\s+month budget\s+month left$/);
  t.match(lines[4], /^search-team\s+4\.2000\s+5\.0000\s+0\.8000\s+4\.2000\s+100\.0000\s+95\.8000$/);
  t.match(lines[3], /^batch-team\s+1\.4000\s+-\s+-\s+1\.4000\s+50\.0000\s+48\.6000$/);
  t.ok(lines.includes('No budget, spend not counted (see gateway_cost_usd_total): other-team'));
});

t.test('without Redis: --from reads the gateway\'s gauges; without either it says how', async (t) => {
  const mock = await startUsageMock(USAGE);
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes: ROUTES, upstreamOrigin: mock.upstream.origin });
  t.teardown(() => gateway.close());
  await traffic(t, gateway);

  const json = await spend(['--json', '--from', gateway.origin]);
  t.equal(json.code, 0, json.stderr);
  const report = JSON.parse(json.stdout) as { source: string; store: string; callers: typeof EXPECTED };
  t.match(report, { source: 'gateway', store: 'memory' });
  t.strictSame(report.callers, EXPECTED, 'callers by name');
  const table = await spend(['--from', gateway.origin]);
  t.match(table.stdout, /from the gateway's \/metrics \(counted in its memory\)/);

  const neither = await spend([]);
  t.equal(neither.code, 2);
  t.match(neither.stderr, /REDIS_URL is not set.*--from http:\/\/HOST:PORT/);
  const bad = await spend(['--from', 'not-a-url']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /is not an http\(s\) origin/);
});

t.test('a Redis that cannot be reached: exit 2 and one line that names its host, never its password', async (t) => {
  const redis = await startRedisServer();
  await redis.stop();
  const dir = mkdtempSync(join(tmpdir(), 'spend-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'routes.yaml'), ROUTES);
  const result = await spend(['--routes', join(dir, 'routes.yaml')], { REDIS_URL: `redis://user:s3cret-pass@127.0.0.1:${redis.port}` });
  t.equal(result.code, 2);
  t.match(result.stderr, new RegExp(`^spend: cannot read Redis at 127\\.0\\.0\\.1:${redis.port}: `));
  t.notMatch(result.stderr + result.stdout, /s3cret/);
  t.equal(result.stderr.trim().split('\n').length, 1);
});
