import { readFileSync } from 'node:fs';
import t from 'tap';
import { compileRoutes } from '../../../scripts/routes/compile-routes.js';
import { formatProblem } from '../../../scripts/routes/problem.js';
import { DEFAULT_MAX_ATTEMPTS } from '../../../scripts/routes/resolve-routes.js';
import { failoverRoutes } from '../../helpers/failover-setup.js';

// endpoints, fallback and max_attempts in routes.yaml: what compiles, and each mistake at its line:col.

t.test('endpoints, weights, names and fallbacks compile into the tables', async (t) => {
  const compiled = compileRoutes(failoverRoutes(5));
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  const { tables } = compiled;
  t.equal(tables.maxAttempts, 5);
  t.strictSame(tables.providers['pool']?.endpoints, [
    { name: 'a', baseUrl: 'http://127.0.0.1:9/v1', baseUrlEnv: 'A_URL', apiKeyEnv: 'A_KEY', weight: 1 },
    { name: 'b', baseUrl: 'http://127.0.0.1:9/v1', baseUrlEnv: 'B_URL', apiKeyEnv: 'B_KEY', weight: 3 },
  ]);
  t.strictSame(tables.providers['solo']?.endpoints, [{ name: '0', baseUrl: 'http://127.0.0.1:9/v1', baseUrlEnv: 'SOLO_URL', apiKeyEnv: 'MOCK_API_KEY', weight: 1 }]);
  t.match(tables.providers['pool'], { auth: { header: 'authorization', scheme: 'bearer' } }, 'endpoint keys are sent as the provider says');
  t.strictSame(tables.models['pool/main']?.fallback, ['backup/other']);
  t.strictSame(tables.models['backup/other']?.fallback, []);
});

t.test('max_attempts defaults to 3', async (t) => {
  const compiled = compileRoutes(failoverRoutes().replace(/^defaults: .*\n/m, ''));
  t.equal(compiled.ok && compiled.tables.maxAttempts, DEFAULT_MAX_ATTEMPTS);
  t.equal(DEFAULT_MAX_ATTEMPTS, 3);
});

t.test('every mistake in endpoints, fallback and max_attempts, at its line and column', async (t) => {
  const result = compileRoutes(readFileSync(new URL('../../fixtures/routes/failover.yaml', import.meta.url), 'utf8'));
  t.strictSame(result.ok ? [] : result.problems.map((problem) => formatProblem('routes.yaml', problem)), [
    'routes.yaml:5:5: providers.both.endpoints: a provider has base_url or endpoints, not both',
    'routes.yaml:6:3: providers.neither: needs base_url (one endpoint) or endpoints (several)',
    'routes.yaml:9:5: providers.pool.api_key_env: belongs on each endpoint when the provider has endpoints',
    'routes.yaml:12:17: providers.pool.endpoints[1].name: endpoint name "eu" is used twice in this provider (an unnamed endpoint is named by its index)',
    'routes.yaml:12:63: providers.pool.endpoints[1].weight: must be >= 1',
    'routes.yaml:13:21: providers.pool.endpoints[2].base_url: must not carry credentials, a query or a fragment (use api_key_env and headers)',
    'routes.yaml:13:53: providers.pool.endpoints[2]: unknown key "colour"',
    'routes.yaml:15:16: providers.empty.endpoints: must list at least 1 item (leave the key out instead)',
    'routes.yaml:20:24: models."pool/a".fallback[0]: a model cannot fall back to itself',
    'routes.yaml:20:40: models."pool/a".fallback[2]: "pool/b" is listed twice',
    'routes.yaml:20:48: models."pool/a".fallback[3]: "pool/zzz" is not on the roster',
    'routes.yaml:21:23: models."pool/b".fallback: must list at least 1 item (leave the key out instead)',
    'routes.yaml:22:27: defaults.max_attempts: must be >= 1',
  ]);
});

t.test('endpoint names: an unnamed endpoint is its index, and an index name cannot be taken twice', async (t) => {
  const text = failoverRoutes().replace('{ name: a, base_url', '{ name: "1", base_url').replace('{ name: b, base_url', '{ base_url');
  const result = compileRoutes(text);
  t.match(result.ok ? [] : result.problems.map((problem) => problem.message), [/endpoints\[1\]: endpoint name "1" is used twice/]);
});

t.test('breaker: each key from the provider, else defaults.breaker, else the built-in default', async (t) => {
  const text = failoverRoutes(3, '{ cooldown_ms: 1000 }').replace('    timeout_ms: 400\n', '    timeout_ms: 400\n    breaker: { consecutive_failures: 2 }\n');
  const compiled = compileRoutes(text);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  t.strictSame(compiled.tables.providers['solo']?.breaker, { consecutiveFailures: 2, cooldownMs: 1000, maxCooldownMs: 300_000 });
  t.strictSame(compiled.tables.providers['pool']?.breaker, { consecutiveFailures: 5, cooldownMs: 1000, maxCooldownMs: 300_000 });
});

t.test('breaker: max_cooldown_ms below cooldown_ms, a zero count and unknown keys are build errors', async (t) => {
  const text = failoverRoutes(3, '{ cooldown_ms: 5000, max_cooldown_ms: 1000 }').replace('    timeout_ms: 400\n', '    timeout_ms: 400\n    breaker: { consecutive_failures: 0, cooldown_ms: 100000, jitter: 1 }\n');
  const result = compileRoutes(text);
  t.strictSame(result.ok ? [] : result.problems.map((problem) => formatProblem('routes.yaml', problem)), [
    'routes.yaml:15:5: providers.solo.breaker: max_cooldown_ms (1000) is less than cooldown_ms (100000), counting what it inherits',
    'routes.yaml:15:38: providers.solo.breaker.consecutive_failures: must be >= 1',
    'routes.yaml:15:62: providers.solo.breaker: unknown key "jitter"',
    'routes.yaml:22:30: defaults.breaker: max_cooldown_ms (1000) is less than cooldown_ms (5000)',
  ]);
});
