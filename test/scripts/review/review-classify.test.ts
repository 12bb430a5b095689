import t from 'tap';
import { fileURLToPath } from 'node:url';
import type { CallerTable, RouteTables } from '../../../src/generated/types/route-tables.js';
import { reviewChange } from '../../../scripts/review/classify.js';
import { reviewJson } from '../../../scripts/review/json-output.js';
import { compileSide, readSide } from '../../../scripts/review/load-sides.js';

const fixture = (name: string) => fileURLToPath(new URL(`../../fixtures/review/${name}.yaml`, import.meta.url));
const side = (name: string) => compileSide(readSide(fixture(name)), 'old');

/** The --json form of reviewing fixture OLD -> NEW, parsed: what a CI job reads. */
function review(oldName: string, newName: string, now = Date.parse('2026-11-26T00:00:00Z')) {
  const next = side(newName);
  return JSON.parse(reviewJson(reviewChange(side(oldName).tables, next.tables, next.lineOf, now))) as Record<string, unknown[]>;
}

const rule = (providerStatus: string, status: number, gatewayCode: string, retry: boolean, type = 'rate_limit_error', code = 'rate_limit_exceeded') => ({ providerStatus, status, type, code, gatewayCode, retry });
const endpoint = (name: string, baseUrl: string, apiKeyEnv: string, weight = 1) => ({ name, host: new URL(baseUrl).host, baseUrl, baseUrlEnv: null, apiKeyEnv, weight });

t.test('breaking: removal, probable rename, lower output limit, reasoning removed, dialect, a provider with its models', async (t) => {
  t.strictSame(review('base', 'breaking'), {
    breaking: [
      { kind: 'model_removed', model: 'alpha/small', provider: 'alpha', after: 'alpha/mini', line: 20, before: { provider: 'alpha', upstreamModel: 'small' } },
      { kind: 'model_removed', model: 'beta/legacy', provider: 'beta', before: { provider: 'beta', upstreamModel: 'legacy' } },
      { kind: 'model_removed', model: 'old/model', provider: 'old', before: { provider: 'old', upstreamModel: 'model' } },
      { kind: 'output_limit_lowered', model: 'alpha/big', provider: 'alpha', before: 32000, after: 16000, line: 19 },
      { kind: 'reasoning_removed', model: 'gamma/think', provider: 'gamma', before: 'adaptive', after: 'none', line: 23 },
      { kind: 'provider_removed', provider: 'old', before: { dialect: 'openai', models: 1 } },
      { kind: 'dialect_changed', provider: 'gamma', before: 'openai', after: 'anthropic', line: 15 },
    ],
    behaviour: [],
    safe: [
      {
        kind: 'model_added', model: 'alpha/mini', provider: 'alpha', before: 'alpha/small', line: 20,
        after: { provider: 'alpha', upstreamModel: 'small', maxOutputTokens: null, reasoning: 'none', fallback: [], deprecated: null },
      },
    ],
  });
});

t.test('behaviour: repointed, fallback, deprecation, reasoning mode, headers, a moved endpoint, max_attempts, error rules by effect', async (t) => {
  const result = review('base', 'behaviour');
  t.strictSame(result['breaking'], []);
  t.strictSame(result['safe'], []);
  t.strictSame(result['behaviour'], [
    { kind: 'model_repointed', model: 'alpha/big', provider: 'alpha', before: 'big-2026-01', after: 'big-2026-06', line: 20 },
    { kind: 'fallback_changed', model: 'alpha/big', provider: 'alpha', before: ['beta/big'], after: ['beta/big', 'gamma/chat'], line: 20 },
    { kind: 'model_deprecated', model: 'gamma/chat', provider: 'gamma', before: null, after: { since: '2026-12-01', sunset: '2099-03-01', replacement: 'alpha/big' }, line: 24 },
    { kind: 'capability_changed', model: 'gamma/think', provider: 'gamma', before: { reasoning: 'adaptive' }, after: { reasoning: 'budget' }, line: 25 },
    { kind: 'headers_changed', provider: 'alpha', before: { 'X-Title': 'review-tests' }, after: { 'X-Title': 'review-tests-2' }, line: 7 },
    {
      kind: 'endpoint_changed', provider: 'beta', line: 11,
      before: endpoint('west', 'https://west.beta.example/v1', 'BETA_KEY_2'), after: endpoint('west', 'https://west2.beta.example/v1', 'BETA_KEY_2'),
    },
    { kind: 'max_attempts_changed', before: 3, after: 2, line: 28 },
    // beta answers its own 429 rule, so the global change reaches the three others, each named.
    ...['alpha', 'gamma', 'old'].map((provider) => ({
      kind: 'error_rule_changed', provider, before: rule('429', 429, 'provider_rate_limited', true), after: rule('429', 429, 'provider_rate_limited', false), line: 30,
    })),
    // Every provider alike: one item, no provider.
    { kind: 'error_rule_changed', before: rule('5xx', 502, 'provider_error', true, 'server_error', 'upstream_error'), after: rule('5xx', 503, 'provider_error', true, 'server_error', 'upstream_error'), line: 31 },
  ]);
});

t.test('safe: a model and a provider added, endpoints added, removed and reweighted, tuning, capabilities declared', async (t) => {
  t.strictSame(review('base', 'safe'), {
    breaking: [],
    behaviour: [],
    safe: [
      { kind: 'model_added', model: 'delta/model', provider: 'delta', after: { provider: 'delta', upstreamModel: 'delta-1', maxOutputTokens: 2000, reasoning: 'none', fallback: [], deprecated: null }, line: 29 },
      { kind: 'capability_changed', model: 'alpha/small', provider: 'alpha', before: { maxOutputTokens: null }, after: { maxOutputTokens: 4000 }, line: 26 },
      { kind: 'capability_changed', model: 'beta/big', provider: 'beta', before: { reasoning: 'none' }, after: { reasoning: 'budget' }, line: 27 },
      {
        kind: 'provider_changed', provider: 'alpha', line: 8,
        before: { timeoutMs: 600000, breaker: { consecutiveFailures: 5, cooldownMs: 30000, maxCooldownMs: 300000 } },
        after: { timeoutMs: 900000, breaker: { consecutiveFailures: 8, cooldownMs: 30000, maxCooldownMs: 300000 } },
      },
      { kind: 'endpoint_changed', provider: 'beta', before: endpoint('east', 'https://east.beta.example/v1', 'BETA_KEY'), after: endpoint('east', 'https://east.beta.example/v1', 'BETA_KEY', 2), line: 12 },
      { kind: 'endpoint_added', provider: 'beta', after: endpoint('north', 'https://north.beta.example/v1', 'BETA_KEY_3'), line: 13 },
      { kind: 'endpoint_removed', provider: 'beta', before: endpoint('west', 'https://west.beta.example/v1', 'BETA_KEY_2') },
      { kind: 'provider_added', provider: 'delta', after: { dialect: 'openai', endpoints: ['0'], hosts: ['delta.example'] }, line: 16 },
    ],
  });
});

t.test('a removal after the sunset is a planned removal (not breaking); before the sunset it is breaking', async (t) => {
  t.strictSame(review('deprecated', 'retired'), {
    breaking: [],
    behaviour: [
      { kind: 'planned_removal', model: 'beta/legacy', provider: 'beta', before: { since: '2019-06-01', sunset: '2020-01-01', replacement: 'beta/big' } },
      { kind: 'planned_removal', model: 'old/model', provider: 'old', before: { since: '2019-06-01', sunset: '2020-01-01', replacement: null } },
      {
        kind: 'deprecation_changed', model: 'gamma/chat', provider: 'gamma', line: 21,
        before: { since: '2026-12-01', sunset: '2099-03-01', replacement: null }, after: { since: '2026-12-01', sunset: '2098-03-01', replacement: 'alpha/big' },
      },
      // The provider goes with models whose removal was planned: no more severe than they are.
      { kind: 'provider_removed', provider: 'old', before: { dialect: 'openai', models: 1 } },
    ],
    safe: [],
  });
  // The same change reviewed before the sunset (midnight UTC) breaks the callers still using them.
  const early = review('deprecated', 'retired', Date.parse('2019-12-31T23:59:59Z'));
  t.strictSame(early['breaking']!.map((item) => (item as { kind: string; model?: string; provider?: string }).model ?? (item as { provider: string }).provider), ['beta/legacy', 'old/model', 'old']);
  t.strictSame(review('deprecated', 'retired', Date.parse('2020-01-01T00:00:00Z'))['breaking'], [], 'the sunset day itself counts as passed');
});

t.test('no change: three empty sections; removing the deprecation again is a behaviour change', async (t) => {
  t.strictSame(review('base', 'base'), { breaking: [], behaviour: [], safe: [] });
  const undone = review('behaviour', 'base')['behaviour']!.find((item) => (item as { kind: string }).kind === 'deprecation_changed');
  t.match(undone, { model: 'gamma/chat', before: { sunset: '2099-03-01' }, after: null });
});

t.test('a rename is paired only on the same provider and upstream model', async (t) => {
  const base = side('base').tables;
  const renamed: RouteTables = { ...base, models: { ...base.models } };
  // beta/legacy -> beta/legacy-2 (same upstream): paired; alpha/small -> alpha/other (another upstream): not paired.
  renamed.models['beta/legacy-2'] = base.models['beta/legacy']!;
  renamed.models['alpha/other'] = { ...base.models['alpha/small']!, upstreamModel: 'other' };
  delete renamed.models['beta/legacy'];
  delete renamed.models['alpha/small'];
  const result = reviewChange(base, renamed, () => 1, 0);
  t.strictSame(result.breaking.map((item) => [item.model, item.after]), [['alpha/small', undefined], ['beta/legacy', 'beta/legacy-2']]);
  t.strictSame(result.safe.map((item) => [item.kind, item.model, item.before]), [['model_added', 'alpha/other', undefined], ['model_added', 'beta/legacy-2', 'beta/legacy']]);
});

t.test('callers (issue 20 shape, read only when the compiled tables have them): lost, gained model by model, keys, limits', async (t) => {
  const base = side('base').tables;
  const caller = (name: string, models: string[], more: Partial<CallerTable> = {}): CallerTable => ({
    name, keyDigests: ['d1'], keyEnv: null, models, limits: { requestsPerMinute: 60, tokensPerMinute: null, concurrentRequests: null }, budget: null, ...more,
  });
  const before = { ...base, callers: { search: caller('search', ['alpha/big', 'alpha/small']), batch: caller('batch', ['beta/big']), gone: caller('gone', ['gamma/chat']) } };
  const after = {
    ...base,
    callers: {
      search: caller('search', ['alpha/big', 'beta/big', 'gamma/chat'], { keyDigests: ['d2'] }),
      batch: caller('batch', ['beta/big'], { limits: { requestsPerMinute: 30, tokensPerMinute: null, concurrentRequests: 4 }, budget: { usdPerMonth: 100, usdPerDay: null } }),
    },
  };
  const result = reviewChange(before, after, (path) => (path[0] === 'callers' ? 7 : 1), 0);
  const pick = (items: readonly { kind: string; caller?: string; model?: string }[]) => items.map((item) => [item.kind, item.caller, item.model]);
  t.strictSame(pick(result.breaking), [
    ['caller_lost_model', 'gone', 'gamma/chat'],
    ['caller_lost_model', 'search', 'alpha/small'],
    ['caller_key_removed', 'search', undefined],
  ]);
  t.strictSame(pick(result.behaviour), [
    ['limits_changed', 'batch', undefined],
    ['caller_gained_model', 'search', 'beta/big'],
    ['caller_gained_model', 'search', 'gamma/chat'],
    ['caller_key_added', 'search', undefined],
  ]);
  t.match(result.behaviour[0], { before: { requestsPerMinute: 60, concurrentRequests: null, budget: null }, after: { requestsPerMinute: 30, concurrentRequests: 4, budget: { usdPerMonth: 100 } }, line: 7 });
  t.notMatch(JSON.stringify(result), /"d[12]"/, 'key digests are counted, never printed');
  // A model that left the roster is reported once (model_removed), not again for each caller that had it.
  const withoutModel: RouteTables = { ...after, models: { ...after.models } };
  delete withoutModel.models['alpha/small'];
  const lost = reviewChange(before, withoutModel, () => 1, 0).breaking.filter((item) => item.kind === 'caller_lost_model').map((item) => item.model);
  t.strictSame(lost, ['gamma/chat']);
  t.strictSame(reviewChange(base, base, () => 1, 0), { breaking: [], behaviour: [], safe: [] }, 'tables without callers: no caller items');
});

t.test('gated native fields allowed or withdrawn, and prices, are reported per model', async (t) => {
  const base = side('base').tables;
  const [name, model] = Object.entries(base.models).find((entry) => entry[1] !== undefined)!;
  const widened: RouteTables = { ...base, models: { ...base.models, [name]: { ...model!, allowFields: ['service_tier'], price: { inputPerMtok: 1, outputPerMtok: 2, cachedInputPerMtok: null, cacheWritePerMtok: null } } } };
  const up = reviewChange(base, widened, () => 3, 0);
  t.strictSame(up.behaviour.map((item) => [item.kind, item.model]), [['fields_allowed', name], ['price_changed', name]]);
  t.strictSame(up.breaking, []);
  const down = reviewChange(widened, base, () => 3, 0);
  t.strictSame(down.breaking.map((item) => [item.kind, item.model, item.after]), [['fields_disallowed', name, []]], 'a withdrawn field is refused from then on');
});
