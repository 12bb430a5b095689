import { readFileSync } from 'node:fs';
import t from 'tap';
import type { Change, Review } from '../../../scripts/review/change.js';
import { reviewChange } from '../../../scripts/review/classify.js';
import { reviewMarkdown } from '../../../scripts/review/markdown-output.js';
import { compileRoutes } from '../../../scripts/routes/compile-routes.js';

/** Changes once classified "safe" (or reported wrongly) that hurt callers: issue 34, item 11. */
const NOW = Date.parse('2026-11-26T00:00:00Z');
const fixture = (name: string) => readFileSync(new URL(`../../fixtures/review/${name}.yaml`, import.meta.url), 'utf8');
const everyField = fixture('every-field');

function review(oldText: string, newText: string): { result: Review; items: Record<keyof Review, Partial<Change>[]>; markdown: string } {
  const compile = (text: string) => {
    const compiled = compileRoutes(text);
    if (!compiled.ok) throw new Error(compiled.problems.map((problem) => `${problem.line}:${problem.col}: ${problem.message}`).join('\n'));
    return compiled;
  };
  const old = compile(oldText);
  const next = compile(newText);
  const result = reviewChange(old.tables, next.tables, (path) => next.locate(path, 'key').line, NOW);
  const strip = ({ severity: _severity, ...item }: Change) => item;
  return { result, items: { breaking: result.breaking.map(strip), behaviour: result.behaviour.map(strip), safe: result.safe.map(strip) }, markdown: reviewMarkdown(result, { old: 'old', new: 'new' }) };
}
const edited = (from: string, to: string) => {
  if (!everyField.includes(from)) throw new Error(`every-field.yaml has no ${from}`);
  return review(everyField, everyField.replace(from, to));
};
const rowOf = (markdown: string, kind: string) => markdown.split('\n').find((line) => line.startsWith(`| \`${kind}\``)) ?? '';

t.test('a lower timeout is a behaviour change; a higher one is safe', async (t) => {
  const lowered = edited('    timeout_ms: 60000\n    stream_idle_timeout_ms: 30000', '    timeout_ms: 20000\n    stream_idle_timeout_ms: 60000');
  t.strictSame(lowered.items, {
    breaking: [],
    behaviour: [{ kind: 'timeout_lowered', provider: 'alpha', before: { timeoutMs: 60000 }, after: { timeoutMs: 20000 }, line: 11 }],
    safe: [{ kind: 'provider_changed', provider: 'alpha', before: { streamIdleTimeoutMs: 30000 }, after: { streamIdleTimeoutMs: 60000 }, line: 12 }],
  });
  t.match(rowOf(lowered.markdown, 'timeout_lowered'), /timeoutMs `60000` → `20000`: requests or streams that take longer are cut off \| 11 \|$/);
  t.match(edited('connect_timeout_ms: 5000', 'connect_timeout_ms: 1000').items.behaviour, [{ kind: 'timeout_lowered', before: { connectTimeoutMs: 5000 }, after: { connectTimeoutMs: 1000 } }]);
});

t.test('a stricter breaker (fewer failures, longer cool-down) is a behaviour change; a more lenient one is safe', async (t) => {
  for (const to of ['consecutive_failures: 2, cooldown_ms: 10000', 'consecutive_failures: 4, cooldown_ms: 20000']) {
    const { items } = edited('consecutive_failures: 4, cooldown_ms: 10000', to);
    t.strictSame(items.behaviour.map((item) => item.kind), ['breaker_stricter'], to);
    t.strictSame(items.safe, []);
  }
  t.strictSame(edited('consecutive_failures: 4', 'consecutive_failures: 6').items.safe.map((item) => item.kind), ['provider_changed']);
});

t.test('the key header changed and stream_usage turned off are behaviour changes, said plainly', async (t) => {
  const header = edited('auth: { header: X-Api-Key }', 'auth: { header: X-Key }');
  t.strictSame(header.items, { breaking: [], behaviour: [{ kind: 'key_header_changed', provider: 'alpha', before: { header: 'x-api-key', scheme: 'raw' }, after: { header: 'x-key', scheme: 'raw' }, line: 8 }], safe: [] });
  const usage = edited('stream_usage: true', 'stream_usage: false');
  t.strictSame(usage.items, { breaking: [], behaviour: [{ kind: 'stream_usage_changed', provider: 'alpha', before: true, after: false, line: 13 }], safe: [] });
  t.match(rowOf(usage.markdown, 'stream_usage_changed'), /streams are no longer asked for usage, so a stream whose caller did not ask for it is not counted or charged/);
});

t.test('api_key_env renamed: breaking until the new variable is set, and the review says so', async (t) => {
  const renamed = edited('api_key_env: ALPHA_KEY', 'api_key_env: ALPHA_API_KEY');
  t.strictSame(renamed.items, {
    breaking: [{ kind: 'key_env_changed', provider: 'alpha', before: { endpoint: '0', apiKeyEnv: 'ALPHA_KEY' }, after: { endpoint: '0', apiKeyEnv: 'ALPHA_API_KEY' }, line: 7 }],
    behaviour: [],
    safe: [],
  });
  t.match(rowOf(renamed.markdown, 'key_env_changed'), /reads its key from `ALPHA_API_KEY` \(was `ALPHA_KEY`\): breaking until `ALPHA_API_KEY` is set where the gateway runs/);
  // On one endpoint of several, too; a weight alone stays safe.
  const base = fixture('base');
  const endpoints = review(base, base.replace('api_key_env: BETA_KEY_2 }', 'api_key_env: BETA_WEST_KEY, weight: 3 }'));
  t.strictSame(endpoints.items.breaking.map((item) => [item.kind, item.after]), [['key_env_changed', { endpoint: 'west', apiKeyEnv: 'BETA_WEST_KEY' }]]);
  t.strictSame(endpoints.items.safe.map((item) => item.kind), ['endpoint_changed']);
});

t.test('callers added to a file that had none: breaking (every GATEWAY_API_KEYS key gets 401), not "18 models gained"', async (t) => {
  const base = fixture('base');
  const callers = [
    'callers:',
    '  search:',
    '    key_env: SEARCH_KEYS',
    '  batch:',
    '    key_env: BATCH_KEYS',
    '    models: ["alpha/*"]',
    '',
  ].join('\n');
  const declared = review(base, `${base}${callers}`);
  t.strictSame(declared.items.breaking, [{ kind: 'callers_declared', before: null, after: { callers: ['batch', 'search'] }, line: 33 }]);
  // batch may use alpha/*, and alpha/big falls back to beta/big: shown too.
  t.strictSame(declared.items.behaviour.map((item) => [item.kind, item.caller, item.model, item.after]), [
    ['caller_added', 'batch', undefined, { keys: 0, keyEnv: 'BATCH_KEYS', models: ['alpha/big', 'alpha/small'] }],
    ['caller_served_outside_models', 'batch', 'alpha/big', 'beta/big'],
    ['caller_added', 'search', undefined, { keys: 0, keyEnv: 'SEARCH_KEYS', models: ['alpha/big', 'alpha/small', 'beta/big', 'beta/legacy', 'gamma/chat', 'gamma/think', 'old/model'] }],
  ]);
  t.notOk(declared.result.behaviour.some((item) => item.kind === 'caller_gained_model'), 'no model is "gained": every key could use every model before');
  t.match(rowOf(declared.markdown, 'callers_declared'), /^\| `callers_declared` \| all callers \| .*every key of GATEWAY_API_KEYS \(and anonymous access\) gets 401, and the gateway refuses to start while GATEWAY_API_KEYS is set/);
  // And back: the callers' keys stop working.
  const removed = review(`${base}${callers}`, base);
  t.strictSame(removed.items, { breaking: [{ kind: 'callers_removed', before: { callers: ['batch', 'search'] }, after: null }], behaviour: [], safe: [] });
});

t.test('a new provider or endpoint shows the host its traffic goes to', async (t) => {
  const { items, markdown } = review(fixture('base'), fixture('safe'));
  t.match(items.safe.find((item) => item.kind === 'provider_added'), { provider: 'delta', after: { hosts: ['delta.example'] } });
  t.match(rowOf(markdown, 'provider_added'), /traffic goes to `delta\.example`/);
  t.match(rowOf(markdown, 'endpoint_added'), /endpoint `north` added: traffic goes to `north\.beta\.example` \(`https:\/\/north\.beta\.example\/v1`\)/);
});

t.test('a fallback that answers a caller with a model outside its models is shown', async (t) => {
  // team may use alpha/big and gem/*; alpha/big already fell back to alpha/small (not new, not shown again).
  const { items, markdown } = edited('reasoning_levels: [low, high],', 'reasoning_levels: [low, high], fallback: [alpha/small, gem/flash],');
  t.strictSame(items.breaking, []);
  t.strictSame(items.behaviour, [
    { kind: 'fallback_changed', model: 'gem/pro', provider: 'gem', before: [], after: ['alpha/small', 'gem/flash'], line: 35 },
    { kind: 'caller_served_outside_models', caller: 'team', model: 'gem/pro', after: 'alpha/small', line: 44 },
  ]);
  t.match(rowOf(markdown, 'caller_served_outside_models'), /caller `team` `gem\/pro` \| asking for this model, it may be answered by its fallback `alpha\/small`, which is not in its models/);
});
