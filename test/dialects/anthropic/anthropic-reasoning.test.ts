import t from 'tap';
import { ADAPTIVE_MODEL, BUDGET_MODEL, refusal, translate, withFields } from '../../helpers/anthropic-request.js';

const thinkingOf = (fields: Record<string, unknown>, model = BUDGET_MODEL) => translate(withFields(fields), model).json['thinking'] as unknown;
const enabled = (budget: number) => ({ type: 'enabled', budget_tokens: budget });

t.test('budget models: absent or none → no thinking', async (t) => {
  for (const effort of [undefined, null, 'none']) t.equal(thinkingOf({ reasoning_effort: effort }), undefined, `reasoning_effort ${String(effort)}`);
});

t.test('budget models: a level maps to a budget that grows with the effort, clamped into [1024, max_tokens)', async (t) => {
  // [max_tokens (undefined: the model's 64000), minimal, low, medium, high, xhigh, max]
  const table: [number | undefined, number[]][] = [
    [undefined, [1024, 2048, 8192, 16384, 32768, 63999]],
    [1025, [1024, 1024, 1024, 1024, 1024, 1024]],
    [2000, [1024, 1999, 1999, 1999, 1999, 1999]],
    [10000, [1024, 2048, 8192, 9999, 9999, 9999]],
  ];
  const levels = ['minimal', 'low', 'medium', 'high', 'xhigh', 'max'];
  for (const [maxTokens, budgets] of table) {
    levels.forEach((level, i) => {
      t.same(thinkingOf({ reasoning_effort: level, max_tokens: maxTokens }), enabled(budgets[i]!), `${level} with max_tokens ${String(maxTokens)}`);
    });
  }
  t.same(thinkingOf({ reasoning_effort: 'high', max_completion_tokens: 2000, max_tokens: 500 }), enabled(1999), 'max_completion_tokens is the bound');
  // A max_tokens above the model's max_output_tokens is refused (test/dialects/native-fields.test.ts): the top budget needs a larger model.
  const large = { ...BUDGET_MODEL, maxOutputTokens: 200000 };
  levels.forEach((level, i) => t.same(thinkingOf({ reasoning_effort: level, max_tokens: 200000 }, large), enabled([1024, 2048, 8192, 16384, 32768, 65536][i]!), `${level} with max_tokens 200000`));
});

t.test('budget models: a level where nothing fits (max_tokens <= 1024) is a 400 naming reasoning_effort', async (t) => {
  for (const maxTokens of [1, 1000, 1024]) {
    const error = refusal(withFields({ reasoning_effort: 'minimal', max_tokens: maxTokens }));
    t.match(error.body, { gateway_code: 'invalid_request', param: 'reasoning_effort' }, `max_tokens ${maxTokens}`);
    t.match(error.body.message, /1024/);
  }
});

t.test('budget models: an integer is used as is within [1024, max_tokens), else a 400 naming reasoning_effort', async (t) => {
  t.same(thinkingOf({ reasoning_effort: 1024, max_tokens: 2000 }), enabled(1024));
  t.same(thinkingOf({ reasoning_effort: 1999, max_tokens: 2000 }), enabled(1999));
  t.same(thinkingOf({ reasoning_effort: 1024, max_tokens: 1025 }), enabled(1024));
  t.same(thinkingOf({ reasoning_effort: 63999 }), enabled(63999), 'below the model default max_tokens');
  const refused: [number, number | undefined][] = [
    [1023, 2000],
    [1, 2000],
    [2000, 2000],
    [2001, 2000],
    [1024, 1024],
    [64000, undefined],
  ];
  for (const [budget, maxTokens] of refused) {
    const error = refusal(withFields({ reasoning_effort: budget, max_tokens: maxTokens }));
    t.match(error.body, { gateway_code: 'invalid_request', param: 'reasoning_effort' }, `${budget} with max_tokens ${String(maxTokens)}`);
  }
  const huge = refusal('{"model":"a/b","messages":[{"role":"user","content":"hi"}],"reasoning_effort":100000000000000000000}');
  t.match(huge.body, { param: 'reasoning_effort' }, 'a 21-digit budget');
});

t.test('adaptive models: thinking {type: adaptive} and output_config.effort; levels mapped, integers by bands', async (t) => {
  const cases: [unknown, string][] = [
    ['minimal', 'low'],
    ['low', 'low'],
    ['medium', 'medium'],
    ['high', 'high'],
    ['xhigh', 'xhigh'],
    ['max', 'max'],
    [1, 'low'],
    [1024, 'low'],
    [8191, 'low'],
    [8192, 'medium'],
    [16383, 'medium'],
    [16384, 'high'],
    [32767, 'high'],
    [32768, 'xhigh'],
    [65535, 'xhigh'],
    [65536, 'max'],
    [1_000_000, 'max'],
  ];
  for (const [effort, level] of cases) {
    const { json } = translate(withFields({ reasoning_effort: effort, max_tokens: 1000 }), ADAPTIVE_MODEL);
    t.same(json['thinking'], { type: 'adaptive' }, `${String(effort)}`);
    t.same(json['output_config'], { effort: level }, `${String(effort)} → ${level}`);
  }
  const huge = translate('{"model":"a/b","messages":[{"role":"user","content":"hi"}],"reasoning_effort":100000000000000000000}', ADAPTIVE_MODEL);
  t.same(huge.json['output_config'], { effort: 'max' }, 'a 21-digit budget is max');
  for (const effort of [undefined, 'none']) {
    const { json } = translate(withFields({ reasoning_effort: effort }), ADAPTIVE_MODEL);
    t.notOk('thinking' in json || 'output_config' in json, `${String(effort)}: no thinking`);
  }
  const both = translate(withFields({ reasoning_effort: 'high', response_format: { type: 'json_schema', json_schema: { name: 'n', schema: { type: 'object' } } } }), ADAPTIVE_MODEL);
  t.same(both.json['output_config'], { effort: 'high', format: { type: 'json_schema', schema: { type: 'object' } } }, 'effort and format share output_config');
  t.equal(translate(withFields({ reasoning_effort: 'max' }), ADAPTIVE_MODEL).json['max_tokens'], 128000);
});

t.test('reasoning_effort never reaches Anthropic under its own name', async (t) => {
  for (const model of [BUDGET_MODEL, ADAPTIVE_MODEL]) {
    t.notOk(translate(withFields({ reasoning_effort: 'low' }), model).text.includes('reasoning_effort'));
  }
});
