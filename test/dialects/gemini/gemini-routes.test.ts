import t from 'tap';
import { compileRoutes } from '../../../scripts/routes/compile-routes.js';
import { formatProblem } from '../../../scripts/routes/problem.js';

// The routes.yaml keys of the gemini dialect, compiled by the real compiler: tables when right, line:col when wrong.

const HEAD = `version: 1
providers:
  gem:
    dialect: gemini
    base_url: https://generativelanguage.googleapis.com/v1beta
    api_key_env: GEMINI_API_KEY
  oa:
    base_url: https://api.openai.com/v1
    api_key_env: OPENAI_API_KEY
  vertex:
    dialect: gemini
    base_url: https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/google
    auth: google
`;
const ERRORS = `errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

function compile(providers: string, models: string) {
  return compileRoutes(`${HEAD}${providers}models:\n${models}${ERRORS}`);
}

function problems(providers: string, models: string): string[] {
  const result = compile(providers, models);
  return result.ok ? [] : result.problems.map((problem) => formatProblem('routes.yaml', problem));
}

t.test('gemini providers and models compile: the key header, auth google, thinking ranges and levels with their defaults', async (t) => {
  const result = compile('', `  gem/a: { upstream_model: gemini-2.5-flash, reasoning: budget, thinking_budget: { min: 0, max: 24576 } }
  gem/b: { upstream_model: gemini-2.5-flash-lite, reasoning: budget }
  gem/c: { upstream_model: gemini-3-flash, reasoning: levels, reasoning_levels: [high, minimal, low] }
  gem/d: { upstream_model: gemini-3-pro, reasoning: levels }
  gem/e: { upstream_model: gemini-2.0-flash }
  vertex/f: { upstream_model: gemini-2.5-pro }
`);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const { providers, models } = result.tables;
  t.same(providers['gem']!.auth, { header: 'x-goog-api-key', scheme: 'raw' });
  t.same(providers['gem']!.dialect, 'gemini');
  t.same(providers['vertex']!.auth, { header: 'authorization', scheme: 'google' });
  t.same(models['gem/a']!.thinkingBudget, { min: 0, max: 24576 });
  t.same(models['gem/b']!.thinkingBudget, { min: 512, max: 24576 });
  t.same(models['gem/c']!.reasoningLevels, ['minimal', 'low', 'high'], 'lowest first');
  t.same(models['gem/d']!.reasoningLevels, ['low', 'high']);
  t.equal(models['gem/e']!.thinkingBudget, undefined);
  t.equal(models['gem/e']!.reasoning, 'none');
});

t.test('misplaced thinking keys are reported at their line and column', async (t) => {
  t.strictSame(
    problems('', `  gem/a: { reasoning: adaptive }
  gem/b: { reasoning: none, thinking_budget: { min: 0, max: 10 } }
  gem/c:
    reasoning: budget
    thinking_budget: { min: 900, max: 100 }
  gem/d: { reasoning: budget, reasoning_levels: [low] }
  oa/e: { reasoning: levels }
  oa/f: { reasoning: budget, thinking_budget: { min: 1, max: 2 } }
`),
    [
      'routes.yaml:15:23: models."gem/a".reasoning: adaptive is for anthropic-dialect models: a gemini model takes budget (2.5) or levels (3.x)',
      'routes.yaml:16:29: models."gem/b".thinking_budget: needs reasoning: budget on a model of a gemini-dialect provider',
      'routes.yaml:19:29: models."gem/c".thinking_budget.min: is above max (100)',
      'routes.yaml:20:31: models."gem/d".reasoning_levels: needs reasoning: levels on a model of a gemini-dialect provider',
      'routes.yaml:21:22: models."oa/e".reasoning: levels is for models of a gemini-dialect provider (Gemini 3.x thinkingLevel)',
      'routes.yaml:22:30: models."oa/f".thinking_budget: needs reasoning: budget on a model of a gemini-dialect provider',
    ],
  );
});

t.test('schema problems: an unknown level, a negative budget, auth google with a key', async (t) => {
  t.strictSame(
    problems(`  vertex2:
    dialect: gemini
    base_url: https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/google
    api_key_env: VERTEX_KEY
    auth: google
`, `  gem/a: { reasoning: levels, reasoning_levels: [low, xhigh] }
  gem/b: { reasoning: budget, thinking_budget: { min: -1, max: 10 } }
`),
    [
      'routes.yaml:18:11: providers.vertex2.auth: google sends an OAuth2 token from Google credentials: remove api_key_env',
      'routes.yaml:20:55: models."gem/a".reasoning_levels[1]: must be one of "minimal", "low", "medium", "high"',
      'routes.yaml:21:55: models."gem/b".thinking_budget.min: must be >= 0',
    ],
  );
});
