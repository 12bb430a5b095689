// `npm run review -- --traffic LOG_FILE…`: each item weighed by the requests of a real gateway process's JSON log
// lines (mock provider, two callers), read from a plain file and a .gz one; lines outside the window are left out.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { HI, bearer, startUsageMock } from '../helpers/callers-routes.js';
import { EXPECTED, NEW_ROUTES, OLD_ROUTES, TRAFFIC, USAGE, itemOf, review } from '../scripts/review/traffic-scenario.js';
import { startServerProcess, waitForOutput } from './server-process.js';

const CHILD = fileURLToPath(new URL('./gateway-child.ts', import.meta.url));
t.setTimeout(240_000);

t.test('log files of a real gateway run: requests and callers per item, spend a price change moves, "not called"', async (t) => {
  const mock = await startUsageMock(USAGE);
  t.teardown(() => mock.upstream.close());
  const server = await startServerProcess({ MOCK_BASE_URL: `${mock.upstream.origin}/v1`, MOCK_API_KEY: 'sk-test', GATEWAY_ROUTES_YAML: OLD_ROUTES }, ['--import=tsx', CHILD]);
  t.teardown(() => server.child.kill('SIGKILL'));
  let sent = 0;
  for (const [key, model, times] of TRAFFIC) {
    for (let i = 0; i < times; i++, sent++) {
      const answer = await fetch(`${server.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(key) }, body: JSON.stringify({ model, messages: HI }) });
      t.equal(answer.status, 200);
      await answer.text();
    }
  }
  await waitForOutput(server, (output) => (output.split('"msg":"request"').length - 1 >= sent ? true : undefined));

  const dir = mkdtempSync(join(tmpdir(), 'review-traffic-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const lines = server.output().split('\n').filter((line) => line.startsWith('{'));
  const requestLines = lines.filter((line) => line.includes('"msg":"request"'));
  t.equal(requestLines.length, 8);
  // Half the lines in a plain file (with a line of 8 days ago and one that is not JSON), the rest gzipped.
  const stale = JSON.stringify({ ...(JSON.parse(requestLines[0]!) as object), time: new Date(Date.now() - 8 * 86_400_000).toISOString() });
  const half = Math.floor(lines.length / 2);
  writeFileSync(join(dir, 'gateway.log'), [...lines.slice(0, half), stale, 'chat-routing-gateway listening on …', ''].join('\n'));
  writeFileSync(join(dir, 'gateway.log.1.gz'), gzipSync(`${lines.slice(half).join('\n')}\n`));
  writeFileSync(join(dir, 'old.yaml'), OLD_ROUTES);
  writeFileSync(join(dir, 'new.yaml'), NEW_ROUTES);
  const files = [join(dir, 'old.yaml'), join(dir, 'new.yaml')];
  const traffic = ['--traffic', join(dir, 'gateway.log'), '--traffic', join(dir, 'gateway.log.1.gz')];

  const json = await review(['--json', ...files, ...traffic]);
  t.equal(json.code, 1, `breaking: ${json.stderr}`);
  t.strictSame(itemOf(json.stdout, 'model_removed', 'mock/gpt-4.1-mini').traffic, EXPECTED.removed, 'a removed routing string: its requests and who sent them');
  t.strictSame(itemOf(json.stdout, 'caller_lost_model', 'mock/big').traffic, EXPECTED.lost, 'a caller losing a model: how often it called it');
  t.strictSame(itemOf(json.stdout, 'price_changed', 'mock/big').traffic, EXPECTED.price, 'a price change: the spend it would have moved');
  t.strictSame(itemOf(json.stdout, 'model_repointed', 'mock/unpriced').traffic, { requests: 0, callers: {} });

  const markdown = await review([...files, ...traffic, '--window', '7d']);
  t.equal(markdown.code, 1, markdown.stderr);
  t.equal(markdown.stderr, '');
  const rows = markdown.stdout.split('\n');
  t.ok(rows.includes('Traffic over the last 7 d: `2 log files (8 request lines)`.'), 'the source, and only the window\'s lines');
  t.ok(rows.includes('| Kind | Routing string, provider or caller | What it does | Line | Traffic (7 d) |'));
  t.ok(rows.includes('| `model_removed` | `mock/gpt-4.1-mini` | removed: callers sending it get 400 `unknown_model` |  | 3 requests: `search-team` 2, `batch-team` 1 |'), markdown.stdout);
  t.ok(rows.some((row) => row.startsWith('| `caller_lost_model` | caller `batch-team` `mock/big` |') && row.endsWith('| 2 requests: `batch-team` 2 |')));
  t.ok(rows.some((row) => row.startsWith('| `price_changed` | `mock/big` |') && row.endsWith('| 5 requests: `search-team` 3, `batch-team` 2; cost 0.01 USD, +0.0050 USD at the new price |')));
  t.ok(rows.some((row) => row.startsWith('| `model_repointed` | `mock/unpriced` |') && row.endsWith('| not called in 7 d |')), 'no traffic: said so');

  // A window of one minute still holds this run; the line of 8 days ago is never in.
  const minute = await review(['--json', ...files, ...traffic, '--window', '1m']);
  t.equal(itemOf(minute.stdout, 'price_changed', 'mock/big').traffic?.requests, 5);
  const unreadable = await review([...files, '--traffic', join(dir, 'missing.log')]);
  t.equal(unreadable.code, 1, 'the verdict stands without traffic');
  t.match(unreadable.stderr, /^review: traffic not available: ENOENT/);
  t.match(unreadable.stdout, /Traffic: not available \(`ENOENT[^`]*`\); the items are not weighted\./);
  t.notMatch(unreadable.stdout, /Traffic \(7 d\)/);
  t.same(readFileSync(join(dir, 'new.yaml'), 'utf8'), NEW_ROUTES);
});

t.test('without --traffic the report is unchanged; bad options are usage errors', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'review-traffic-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'old.yaml'), OLD_ROUTES);
  writeFileSync(join(dir, 'new.yaml'), NEW_ROUTES);
  const files = [join(dir, 'old.yaml'), join(dir, 'new.yaml')];
  const plain = await review(['--json', ...files]);
  t.notMatch(plain.stdout, /"traffic"/);
  for (const args of [['--window', '7d'], ['--traffic', 'a.log', '--window', 'week'], ['--traffic', 'http://127.0.0.1:9', '--traffic', 'a.log'], ['--traffic']]) {
    const result = await review([...files, ...args]);
    t.equal(result.code, 2, args.join(' '));
    t.match(result.stderr, /^review: .*\nusage: /);
  }
});
