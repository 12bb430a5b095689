import t from 'tap';
import { ADAPTIVE_MODEL, refusal, translate } from '../../helpers/anthropic-request.js';

const USER_TEXT = '{"role":"user","content":"hi"}';

t.test('deep nesting within the request bound (128) is copied verbatim, whatever the depth', async (t) => {
  const deepSchema = '{"a":'.repeat(118) + '1.0' + '}'.repeat(118);
  const deepArray = '['.repeat(125) + '"x"' + ']'.repeat(125);
  const text = `{"model":"a/b","messages":[${USER_TEXT}],"tools":[{"type":"function","function":{"name":"f","parameters":${deepSchema}}}],"extra":${deepArray}}`;
  const { text: out } = translate(text);
  t.ok(out.includes(`"input_schema":${deepSchema}`));
  t.ok(out.endsWith(`"extra":${deepArray}}`));
  t.doesNotThrow(() => JSON.parse(out));
});

t.test('huge strings and strings that look like structure are copied whole', async (t) => {
  const tricky = 'a"}],"role":"system",{[\\\\"\\u0000\u2028😀';
  const big = 'x'.repeat(8 * 1024 * 1024) + tricky;
  const request = { model: 'a/b', messages: [{ role: 'system', content: tricky }, { role: 'user', content: big }], stop: ['"}]', '\\'] };
  const { text: out, json } = translate(request);
  t.equal(json['messages'][0].content, big);
  t.same(json['system'], [{ type: 'text', text: tricky }]);
  t.same(json['stop_sequences'], ['"}]', '\\']);
  t.ok(out.includes(JSON.stringify(big)), 'the caller encoding of the big string');
  const surrogate = translate(`{"model":"a/b","messages":[{"role":"user","content":"lone \\ud800 half"}]}`);
  t.ok(surrogate.text.includes('"content":"lone \\ud800 half"'), 'a lone surrogate escape is passed as written');
});

t.test('escaped keys mean what JSON.parse reads: "m\\u0065ssages" is messages, "top\\u005fk" is top_k', async (t) => {
  const text =
    '{"model":"a/b","m\\u0065ssages":[{"r\\u006fle":"user","content":[{"typ\\u0065":"text","text":"hi","cache\\u005fcontrol":{"type":"ephemeral"}}]}],' +
    '"top\\u005fk":5,"r\\u0065asoning_effort":"low","max_tok\\u0065ns":3000}';
  const { json } = translate(text);
  t.same(json, {
    model: 'claude-sonnet-4-5',
    max_tokens: 3000,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }],
    thinking: { type: 'enabled', budget_tokens: 2048 },
    top_k: 5,
  });
  const { text: out } = translate('{"model":"a/b","messages":[{"role":"user","content":"hi"}],"\\u0073tream_options":{"include_usage":true}}');
  t.notOk(out.includes('tream_options'), 'an escaped stream_options is still dropped');
  const error = refusal('{"model":"a/b","messages":[{"role":"user","content":"hi"}],"\\u006e":2}');
  t.match(error.body, { gateway_code: 'unsupported_parameter', param: 'n' }, 'an escaped n is still refused');
});

t.test('duplicate keys: the last one counts, as JSON.parse reads it; an unknown field goes once', async (t) => {
  const text =
    '{"model":"a/b","messages":[{"role":"user","content":"first"}],"top_k":1,"messages":[{"role":"user","content":"second","content":"third"}],' +
    '"top_k":2,"tools":[{"type":"function","function":{"name":"f","parameters":{"a":1},"parameters":{"b":2.0}}}]}';
  const { text: out, json } = translate(text);
  t.same(json['messages'], [{ role: 'user', content: 'third' }]);
  t.equal(out.split('top_k').length, 2, 'one top_k');
  t.equal(json['top_k'], 2);
  t.ok(out.includes('"input_schema":{"b":2.0}'));
});

t.test('keys with a meaning in JavaScript are plain data', async (t) => {
  const text = '{"model":"a/b","messages":[{"role":"user","content":"hi"}],"__proto__":{"polluted":true},"constructor":1}';
  const { text: out } = translate(text);
  t.ok(out.endsWith(',"__proto__":{"polluted":true},"constructor":1}'));
  t.equal(({} as Record<string, unknown>)['polluted'], undefined);
});

t.test('spacing anywhere in the caller body changes nothing but the kept bytes', async (t) => {
  const request = {
    model: 'a/b',
    messages: [
      { role: 'developer', content: [{ type: 'text', text: 'rules', cache_control: { type: 'ephemeral' } }] },
      { role: 'user', content: [{ type: 'text', text: 'q' }, { type: 'image_url', image_url: { url: 'https://example.com/i.png' } }] },
      { role: 'assistant', content: 'a', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }] },
      { role: 'tool', tool_call_id: 'c', content: 'r' },
    ],
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
    tool_choice: 'required',
    reasoning_effort: 'high',
    top_k: 3,
  };
  const compact = translate(request, ADAPTIVE_MODEL).json;
  const spaced = translate(` \n\t${JSON.stringify(request, null, '\t\n ')}\r\n `, ADAPTIVE_MODEL).json;
  t.same(spaced, compact);
});
