// Error rules whose status and retry disagree: `npm run check` warns (and still succeeds), and whatever a rule
// says, no answer carries a retry-after beside x-should-retry: false.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { compileRoutes } from '../../../scripts/routes/compile-routes.js';
import { formatProblem } from '../../../scripts/routes/problem.js';
import { envelopeOf, startGateway } from '../../helpers/gateway.js';
import { sendJson, startMockUpstream } from '../../helpers/mock-upstream.js';

const FILE = 'test/fixtures/routes/error-rule-contradictions.yaml';
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const text = readFileSync(new URL(`../../../${FILE}`, import.meta.url), 'utf8');

const expected = [
  `${FILE}:10:122: warning: providers.mock.errors."422": status 422 is the request's own fault but retry: true has SDKs send it again unchanged. Set retry: false, or answer a 5xx`,
  `${FILE}:17:107: warning: errors."429": status 503 says "try later" but retry: false says never; callers get x-should-retry: false (and no retry-after). Set retry: true, or answer another status`,
  `${FILE}:18:113: warning: errors."430": status 429 says "try later" but retry: false says never; callers get x-should-retry: false (and no retry-after). Set retry: true, or answer another status`,
];

t.test('the compiler warns at each rule whose status and retry disagree, and only there', async (t) => {
  const result = compileRoutes(text);
  t.ok(result.ok, 'a warning does not stop the build');
  if (!result.ok) return;
  t.strictSame(result.warnings.map((warning) => formatProblem(FILE, warning)).sort(), [...expected].sort());
  const shipped = compileRoutes(readFileSync(new URL('../../../routes.yaml', import.meta.url), 'utf8'));
  t.strictSame(shipped.ok && shipped.warnings, [], 'the shipped routes.yaml has no contradictory rule');
});

t.test('npm run check prints the warnings on stderr and exits 0', async (t) => {
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/check.ts', FILE], { cwd: repoRoot, timeout: 30_000 }, (error, out, err) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout: out, stderr: err }),
    );
  });
  t.equal(code, 0);
  t.match(stdout, /OK \(1 models, 1 providers\)/);
  t.strictSame(stderr.trim().split('\n'), expected);
});

t.test('an answer that may not be retried carries no retry-after, even when the provider sent one', async (t) => {
  const upstream = await startMockUpstream((request, res) => {
    const status = Number(JSON.parse(request.body).messages[0].content);
    sendJson(res, status, { error: { message: 'slow down', type: 'rate_limit' } }, { 'retry-after': '7', 'retry-after-ms': '7000' });
  });
  const gateway = await startGateway({ routes: text, upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const ask = (status: number) => gateway.post({ model: 'mock/gpt-4.1-mini', messages: [{ role: 'user', content: String(status) }] });

  const refused = await ask(429);
  t.equal(refused.status, 503);
  t.equal(refused.headers.get('x-should-retry'), 'false');
  t.equal(refused.headers.get('retry-after'), null, 'no wait beside "do not retry"');
  t.equal(refused.headers.get('retry-after-ms'), null);
  t.match(await envelopeOf(refused), { gateway_code: 'provider_overloaded', provider_status: 429 });

  const retryable = await ask(503);
  t.equal(retryable.status, 502);
  t.equal(retryable.headers.get('x-should-retry'), 'true');
  t.equal(retryable.headers.get('retry-after'), '7', 'a retryable answer keeps the provider\'s hint');
  t.equal(retryable.headers.get('retry-after-ms'), '7000');
});
