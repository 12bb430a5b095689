import t from 'tap';
import { compileRoutes } from '../../../scripts/routes/compile-routes.js';
import { formatProblem } from '../../../scripts/routes/problem.js';

/**
 * A "billion laughs" routes.yaml (anchors whose aliases nest nine deep, 9^9 repeats, in under 1 KiB): yaml refuses to
 * expand it by throwing; the compiler reports it as a problem at a line and column, as for any other YAML error,
 * rather than ending `npm run check` (and the review) with a stack trace.
 */
const HEAD = ['version: 1', 'providers:', '  alpha:', '    base_url: https://alpha.example/v1', '    api_key_env: ALPHA_KEY'];
const ERRORS = ['errors:', '  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }'];

function bomb(): string[] {
  const lines = ['x-laughs:', '  l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'];
  for (let i = 1; i < 10; i++) lines.push(`  l${i}: &l${i} [${Array.from({ length: 9 }, () => `*l${i - 1}`).join(', ')}]`);
  return lines;
}

t.test('nested aliases past the alias guard: one problem at the first alias, fast, no exception', async (t) => {
  const text = [...HEAD, 'models:', '  alpha/one: {}', ...bomb(), ...ERRORS].join('\n');
  const started = Date.now();
  let result: ReturnType<typeof compileRoutes> | undefined;
  t.doesNotThrow(() => (result = compileRoutes(text)));
  t.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
  t.equal(result?.ok, false);
  const problems = result && !result.ok ? result.problems.map((problem) => formatProblem('routes.yaml', problem)) : [];
  // The first alias is `*l0` on the line of l1, after "  l1: &l1 [" (11 characters).
  t.strictSame(problems, [
    `routes.yaml:${HEAD.length + 5}:12: YAML: the aliases (*name) would expand past 100 uses counting what each repeats (Excessive alias count indicates a resource exhaustion attack); write the repeated parts out or use fewer nested aliases`,
  ]);
});

t.test('a few aliases within the guard still compile as before', async (t) => {
  const text = [...HEAD, 'models:', '  alpha/one: &same { upstream_model: one }', '  alpha/two: *same', ...ERRORS].join('\n');
  const result = compileRoutes(text);
  t.equal(result.ok, true, result.ok ? '' : result.problems.map((problem) => formatProblem('routes.yaml', problem)).join('\n'));
});
