import t from 'tap';
import { createOpenAIStreamTranslator } from '../src/dialects/openai-stream.js';

function translate(data: string, hideUsage = false) {
  const translator = createOpenAIStreamTranslator({ routingModel: 'mock/gpt-4o', providerId: 'mock', hideUsage });
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
