import t from 'tap';
import { createOpenAIStreamTranslator } from '../../../src/dialects/openai/stream.js';

function translate(data: string, hideUsage = false) {
  const translator = createOpenAIStreamTranslator({ routingModel: 'mock/gpt-4o', providerId: 'mock', hideUsage, includeUsage: false });
  return translator.translate({ kind: 'event', event: undefined, data, id: undefined });
}

t.test('model is rewritten at the top level only, exactly, whatever else the event holds', async (t) => {
  const cases: [string, string, string][] = [
    ['plain chunk', '{"id":"a","model":"gpt-4o-2024","choices":[]}', '{"id":"a","model":"mock/gpt-4o","choices":[]}'],
    ['model only nested: added at the top', '{"id":"a","choices":[{"model":"inner"}]}', '{"model":"mock/gpt-4o","id":"a","choices":[{"model":"inner"}]}'],
    ['nested before top-level', '{"x":{"model":"inner"},"model":"up"}', '{"x":{"model":"inner"},"model":"mock/gpt-4o"}'],
    ['"model" as a string value', '{"role":"model","model":"up"}', '{"role":"model","model":"mock/gpt-4o"}'],
    ['duplicate top-level model', '{"model":"a","model":"b"}', '{"model":"mock/gpt-4o","model":"mock/gpt-4o"}'],
    ['escaped quotes in content', '{"choices":[{"delta":{"content":"say \\"model\\": x"}}],"model":"up"}', '{"choices":[{"delta":{"content":"say \\"model\\": x"}}],"model":"mock/gpt-4o"}'],
    ['usage null', '{"model":"up","usage":null}', '{"model":"mock/gpt-4o","usage":null}'],
  ];
  for (const [name, input, output] of cases) t.equal(translate(input).frames, `data: ${output}\n\n`, name);
});

t.test('usage is reported to the engine when an event carries it', async (t) => {
  const step = translate('{"model":"up","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}');
  t.same(step.usage, { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  t.equal(step.end, undefined);
});

t.test('what is not a JSON object passes as it came; [DONE] ends the stream', async (t) => {
  t.equal(translate('not json').frames, 'data: not json\n\n');
  t.same(translate('[DONE]'), { frames: 'data: [DONE]\n\n', end: 'done' });
  t.equal(translate('{"a":1,\n"model":"x"}').frames, 'data: {"a":1,\ndata: "model":"mock/gpt-4o"}\n\n', 'a line break in data becomes two data lines');
});

t.test('a top-level error ends the stream with the envelope; a nested "error" does not', async (t) => {
  const step = translate('{"error":{"message":"boom","code":"server_busy"},"choices":[]}');
  t.equal(step.end, 'error');
  t.match(JSON.parse(step.frames.slice(6)), { error: { message: 'boom', code: 'server_busy', provider_code: 'server_busy', gateway_code: 'provider_stream_error' } });
  const nested = translate('{"model":"up","choices":[{"delta":{"content":"x"},"finish_reason":"stop","error":null}]}');
  t.equal(nested.end, undefined);
  t.equal(nested.frames, 'data: {"model":"mock/gpt-4o","choices":[{"delta":{"content":"x"},"finish_reason":"stop","error":null}]}\n\n');
});

t.test('usage the caller did not ask for is hidden, but still reported to the engine', async (t) => {
  const usage = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 };
  const usageOnly = translate(`{"id":"a","model":"up","choices":[],"usage":${JSON.stringify(usage)}}`, true);
  t.equal(usageOnly.frames, '', 'the usage-only chunk is dropped');
  t.same(usageOnly.usage, usage);
  t.equal(translate('{"id":"a","model":"up","choices":[{"delta":{"content":"x"}}],"usage":null}', true).frames, 'data: {"id":"a","model":"mock/gpt-4o","choices":[{"delta":{"content":"x"}}]}\n\n', 'usage: null is removed');
  const lastWithUsage = translate(`{"model":"up","choices":[{"delta":{},"finish_reason":"stop"}],"usage":${JSON.stringify(usage)}}`, true);
  t.equal(lastWithUsage.frames, 'data: {"model":"mock/gpt-4o","choices":[{"delta":{},"finish_reason":"stop"}]}\n\n', 'usage on a content chunk is removed, the chunk kept');
  t.same(lastWithUsage.usage, usage);
  t.equal(translate('{"model":"up","choices":[]}', true).frames, 'data: {"model":"mock/gpt-4o","choices":[]}\n\n', 'an empty-choices chunk without usage is not the usage chunk');
});

t.test('the fast path for a closing "usage":null gives what the full scan gives', async (t) => {
  const cases = [
    '{"id":"a","model":"up","choices":[{"delta":{"content":"x"}}],"usage":null}',
    '{"id":"a","model":"up","choices":[{"delta":{"content":"a \\"usage\\":null}"}}],"usage":null}',
    '{"model":"up","x":{"usage":null}}',
    '{"usage":null,"model":"up","choices":[]}',
    '{"model":"up","usage":null} ',
  ];
  const expected = [
    '{"id":"a","model":"mock/gpt-4o","choices":[{"delta":{"content":"x"}}]}',
    '{"id":"a","model":"mock/gpt-4o","choices":[{"delta":{"content":"a \\"usage\\":null}"}}]}',
    '{"model":"mock/gpt-4o","x":{"usage":null}}',
    '{"model":"mock/gpt-4o","choices":[]}',
    '{"model":"mock/gpt-4o"} ',
  ];
  cases.forEach((input, i) => t.equal(translate(input, true).frames, `data: ${expected[i]}\n\n`, input));
});

t.test('keys are read as a JSON parser reads them: an escaped spelling is the same key (issue 10, item 5)', async (t) => {
  const smuggledModel = translate('{"model":"x","mod\\u0065l":"gpt-4o-2024-11-20","choices":[],"usage":null}');
  t.equal(smuggledModel.frames, 'data: {"model":"mock/gpt-4o","mod\\u0065l":"mock/gpt-4o","choices":[],"usage":null}\n\n', 'every spelling of model is rewritten');
  t.equal(JSON.parse(smuggledModel.frames.slice(6)).model, 'mock/gpt-4o');
  const onlyEscaped = translate('{"id":"a","\\u006D\\u006F\\u0064\\u0065\\u006C":"gpt-4o-2024-11-20"}');
  t.equal(JSON.parse(onlyEscaped.frames.slice(6)).model, 'mock/gpt-4o', 'an upper-case hex escape too');
  const error = translate('{"model":"up","\\u0065rror":{"message":"boom","code":"server_busy"}}');
  t.equal(error.end, 'error', 'an escaped error is an error');
  t.match(JSON.parse(error.frames.slice(6)), { error: { message: 'boom', provider_code: 'server_busy', gateway_code: 'provider_stream_error' } });
  const usage = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 };
  const hidden = translate(`{"model":"up","choices":[{"delta":{}}],"us\\u0061ge":${JSON.stringify(usage)},"usage":null}`, true);
  t.equal(hidden.frames, 'data: {"model":"mock/gpt-4o","choices":[{"delta":{}}]}\n\n', 'every spelling of hidden usage is removed');
  t.equal(hidden.usage, undefined, 'the parser keeps the last usage: null, so nothing is counted');
  const counted = translate(`{"model":"up","choices":[],"usage":null,"us\\u0061ge":${JSON.stringify(usage)}}`, true);
  t.same(counted, { frames: '', usage }, 'the usage-only chunk is recognised whatever the spelling, and its usage counted');
  const keyLikeText = '{"model":"up","choices":[{"delta":{"content":"\\"mod\\u0065l\\":\\"leak\\""}}]}';
  t.equal(translate(keyLikeText).frames, `data: ${keyLikeText.replace('"up"', '"mock/gpt-4o"')}\n\n`, 'key-like text inside a string is content');
});

t.test('an event whose key has an escape JSON does not have goes through as it came (issue 10, item 7)', async (t) => {
  for (const data of ['{"\\x":1,"usage":{}}', '{"\\u12G4":1,"model":"up"}', '{"mod\\el":"up","error":{"message":"x"}}']) {
    for (const hideUsage of [false, true]) {
      t.same(translate(data, hideUsage), { frames: `data: ${data}\n\n` }, `${data}, hideUsage ${hideUsage}`);
    }
  }
});

t.test('"error": null is not an error; any other top-level error is (issue 10, item 8)', async (t) => {
  const healthy = translate('{"model":"up","error":null,"choices":[{"delta":{"content":"x"}}]}');
  t.same(healthy, { frames: 'data: {"model":"mock/gpt-4o","error":null,"choices":[{"delta":{"content":"x"}}]}\n\n' });
  t.equal(translate('{"model":"up","error" : null }', true).end, undefined, 'spacing around null');
  const late = translate('{"model":"up","error":null,"error":{"message":"late"}}');
  t.equal(late.end, 'error', 'a parser keeps the last error');
  t.match(JSON.parse(late.frames.slice(6)), { error: { message: 'late' } });
  const early = translate('{"model":"up","error":{"message":"early"},"error":null}');
  t.equal(early.end, 'error', 'a parser that keeps the first would see an error: it is one');
  t.match(JSON.parse(early.frames.slice(6)), { error: { message: 'early' } });
  for (const value of ['"boom"', 'false', '0', '[]']) t.equal(translate(`{"model":"up","error":${value}}`).end, 'error', `error: ${value}`);
});

t.test('hostile shapes: a million deep, a hundred thousand duplicates, on every path, without recursion', async (t) => {
  const n = 1_000_000;
  const deep = `${'['.repeat(n)}${']'.repeat(n)}`;
  const fast = translate(`{"model":"up","x":${deep},"usage":null}`, true);
  t.equal(fast.frames, `data: {"model":"mock/gpt-4o","x":${deep}}\n\n`, 'the fast path');
  const usage = translate(`{"model":"up","choices":[],"usage":{"prompt_tokens":1,"x":${deep}}}`, true);
  t.equal(usage.frames, '', 'the usage-only chunk, hidden');
  t.equal(usage.usage?.prompt_tokens, 1);
  const error = translate(`{"error":{"message":"deep","details":${deep}}}`);
  t.equal(error.end, 'error');
  t.match(JSON.parse(error.frames.slice(6)), { error: { message: 'deep' } });
  const duplicates = `{${'"model":"up",'.repeat(100_000)}"mod\\u0065l":"up"}`;
  const rewritten = translate(duplicates).frames;
  t.equal(rewritten, `data: {${'"model":"mock/gpt-4o",'.repeat(100_000)}"mod\\u0065l":"mock/gpt-4o"}\n\n`, 'every copy of model');
});
