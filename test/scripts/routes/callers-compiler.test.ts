// The build's checks of callers: and price:, each at routes.yaml:LINE:COL, and the compiled tables other tools read.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { compileRoutes } from '../../../scripts/routes/compile-routes.js';
import { formatProblem } from '../../../scripts/routes/problem.js';
import { callersRoutes } from '../../helpers/callers-routes.js';

t.test('every mistake in callers is reported where it was written', async (t) => {
  const result = compileRoutes(readFileSync(new URL('../../fixtures/routes/callers-problems.yaml', import.meta.url), 'utf8'));
  t.equal(result.ok, false);
  const problems = result.ok ? [] : result.problems.map((problem) => formatProblem('routes.yaml', problem));
  t.strictSame(problems, [
    'routes.yaml:13:9: callers.one.keys[1]: "sha256:not-hex" is not a key digest: sha256: and 64 hex characters (`npm run key -- NAME` prints one)',
    'routes.yaml:14:22: callers.one.models[1]: "mock/nope" is not on the roster (a prefix pattern ends in "*")',
    'routes.yaml:14:33: callers.one.models[2]: "other/*" matches no routing string on the roster',
    'routes.yaml:15:36: callers.one.limits.requests_per_minute: must be >= 1',
    'routes.yaml:15:58: callers.one.limits.tokens_per_minute: must be integer',
    'routes.yaml:16:5: callers.one.budget: needs a price on every model this caller may use (fallbacks included); without one: "mock/c"',
    'routes.yaml:19:12: callers.two.keys[0]: this digest is also a key of caller "one": a key belongs to one caller',
    'routes.yaml:20:14: callers.two.key_env: SHARED_KEYS is also the key_env of caller "one": a key belongs to one caller',
    'routes.yaml:23:3: callers.three: needs keys (sha256 digests) or key_env, or it could never be used',
  ]);
});

t.test('compiled callers: bare lower-case digests, patterns expanded to sorted routing strings, every field present', async (t) => {
  const result = compileRoutes(
    callersRoutes(`  search-team:
    keys: [sha256:9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08]
    key_env: SEARCH_TEAM_KEYS
    models: [mock/unpriced, "mock/*"]
    limits: { requests_per_minute: 600, concurrent_requests: 20 }
  batch-team:
    key_env: BATCH_TEAM_KEYS
    models: [mock/gpt-4.1-mini]
    budget: { usd_per_month: 500 }`),
  );
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  t.strictSame(result.tables.callers, {
    'batch-team': {
      name: 'batch-team',
      keyDigests: [],
      keyEnv: 'BATCH_TEAM_KEYS',
      models: ['mock/gpt-4.1-mini'],
      limits: { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null },
      budget: { usdPerMonth: 500, usdPerDay: null },
    },
    'search-team': {
      name: 'search-team',
      keyDigests: ['9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'],
      keyEnv: 'SEARCH_TEAM_KEYS',
      models: ['mock/big', 'mock/gpt-4.1-mini', 'mock/unpriced'],
      limits: { requestsPerMinute: 600, tokensPerMinute: null, concurrentRequests: 20 },
      budget: null,
    },
  });
  t.strictSame(result.tables.models['mock/gpt-4.1-mini']?.price, { inputPerMtok: 0.4, outputPerMtok: 1.6, cachedInputPerMtok: 0.1, cacheWritePerMtok: null });
  t.equal(result.tables.models['mock/unpriced']?.price, null);
});

t.test('a caller without models may use every model on the roster', async (t) => {
  const result = compileRoutes(callersRoutes(`  all:\n    key_env: ALL_KEYS`));
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  t.strictSame(result.tables.callers['all']?.models, ['mock/big', 'mock/gpt-4.1-mini', 'mock/unpriced']);
});
