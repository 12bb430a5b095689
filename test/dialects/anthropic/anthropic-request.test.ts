import t from 'tap';
import { ADAPTIVE_MODEL, BUDGET_MODEL, USER, refusal, translate, withFields } from '../../helpers/anthropic-request.js';

t.test('the smallest request: model, max_tokens from the model, the user string as sent, nothing else', async (t) => {
  const { text } = translate('{"model":"anthropic/claude","messages":[{"role":"user","content":"caf\\u00e9 \\"quoted\\""}]}');
  t.equal(text, '{"model":"claude-sonnet-4-5","max_tokens":64000,"messages":[{"role":"user","content":"caf\\u00e9 \\"quoted\\""}]}');
});

t.test('max_tokens: max_completion_tokens, else max_tokens, else the model max_output_tokens (never a small default)', async (t) => {
  t.equal(translate(withFields({ max_completion_tokens: 100, max_tokens: 200 })).json['max_tokens'], 100);
  t.equal(translate(withFields({ max_tokens: 200 })).json['max_tokens'], 200);
  t.equal(translate(withFields({ max_tokens: null, max_completion_tokens: null })).json['max_tokens'], 64000);
  t.equal(translate(withFields({}), ADAPTIVE_MODEL).json['max_tokens'], 128000);
});

t.test('system and developer messages become top-level system text blocks in order, keeping cache_control', async (t) => {
  const { json } = translate({
    model: 'anthropic/claude',
    messages: [
      { role: 'system', content: 'first' },
      { role: 'user', content: 'hi' },
      { role: 'developer', content: [{ type: 'text', text: 'second', cache_control: { type: 'ephemeral', ttl: '1h' } }, { type: 'text', text: 'third' }] },
      { role: 'system', content: 'fourth', cache_control: { type: 'ephemeral' } },
      { role: 'system', content: '' },
    ],
  });
  t.same(json['system'], [
    { type: 'text', text: 'first' },
    { type: 'text', text: 'second', cache_control: { type: 'ephemeral', ttl: '1h' } },
    { type: 'text', text: 'third' },
    { type: 'text', text: 'fourth', cache_control: { type: 'ephemeral' } },
  ]);
  t.same(json['messages'], [{ role: 'user', content: 'hi' }]);
  t.notOk('system' in translate(withFields({})).json, 'no system messages, no system field');
});

t.test('user content parts: text keeps cache_control, data: images become base64 sources, https: images url sources', async (t) => {
  const { json } = translate({
    model: 'anthropic/claude',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?', cache_control: { type: 'ephemeral' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' }, cache_control: { type: 'ephemeral' } },
        ],
      },
      { role: 'user', content: 'and this one', cache_control: { type: 'ephemeral' } },
    ],
  });
  t.same(json['messages'], [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?', cache_control: { type: 'ephemeral' } },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' }, cache_control: { type: 'ephemeral' } },
      ],
    },
    { role: 'user', content: [{ type: 'text', text: 'and this one', cache_control: { type: 'ephemeral' } }] },
  ]);
});

t.test('assistant turns: thinking blocks first and verbatim, then the text, then tool_use blocks with parsed input', async (t) => {
  const thinking = '{"type":"thinking","thinking":"Let me think…","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}';
  const redacted = '{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"}';
  const assistant =
    `{"role":"assistant","content":"Checking.","thinking_blocks":[${thinking},${redacted}],` +
    `"tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\": \\"Paris\\", \\"days\\": 2.0}"}},` +
    `{"id":"toolu_2","type":"function","function":{"name":"now","arguments":""}}]}`;
  const { text, json } = translate(`{"model":"anthropic/claude","messages":[{"role":"user","content":"weather?"},${assistant}]}`);
  t.same(json['messages'][1], {
    role: 'assistant',
    content: [
      JSON.parse(thinking),
      JSON.parse(redacted),
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris', days: 2 } },
      { type: 'tool_use', id: 'toolu_2', name: 'now', input: {} },
    ],
  });
  t.ok(text.includes(`[${thinking},${redacted},`), 'the thinking blocks are the caller bytes');
  t.ok(text.includes('"input":{"city": "Paris", "days": 2.0}'), 'the input is the arguments text itself: spacing and 2.0 kept');
});

t.test('assistant turns without text: null, empty or missing content adds no text block', async (t) => {
  for (const content of [null, '', undefined]) {
    const assistant = { role: 'assistant', content, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: ' {} ' } }] };
    const { json } = translate({ model: 'anthropic/claude', messages: [USER, assistant] });
    t.same(json['messages'][1].content, [{ type: 'tool_use', id: 'c', name: 'f', input: {} }], `content ${JSON.stringify(content)}`);
  }
  const plain = translate('{"model":"anthropic/claude","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"pre\\u0066ill"}]}');
  t.ok(plain.text.endsWith('{"role":"assistant","content":"pre\\u0066ill"}]}'), 'a plain text turn is the caller string');
  const parts = translate({ model: 'a/b', messages: [USER, { role: 'assistant', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }] }] });
  t.same(parts.json['messages'][1].content, [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }]);
});

t.test('consecutive tool messages become one user turn of tool_result blocks, in order', async (t) => {
  const { json } = translate({
    model: 'anthropic/claude',
    messages: [
      USER,
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
          { id: 'b', type: 'function', function: { name: 'f', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: 'sunny' },
      { role: 'tool', tool_call_id: 'b', content: [{ type: 'text', text: 'rain', cache_control: { type: 'ephemeral' } }] },
      { role: 'user', content: 'thanks' },
      { role: 'tool', tool_call_id: 'c', content: null },
    ],
  });
  t.same(json['messages'].slice(2), [
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'a', content: 'sunny' },
        { type: 'tool_result', tool_use_id: 'b', content: [{ type: 'text', text: 'rain', cache_control: { type: 'ephemeral' } }] },
      ],
    },
    { role: 'user', content: 'thanks' },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c' }] },
  ]);
});

t.test('tools: name, description, input_schema (an empty object schema when absent), strict and cache_control kept', async (t) => {
  const { json } = translate(
    withFields({
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'Weather now', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true } },
        { type: 'function', function: { name: 'now' }, cache_control: { type: 'ephemeral' } },
        { type: 'function', function: { name: 'later', description: null, parameters: null, cache_control: { type: 'ephemeral', ttl: '5m' } } },
      ],
    }),
  );
  t.same(json['tools'], [
    { name: 'get_weather', description: 'Weather now', input_schema: { type: 'object', properties: { city: { type: 'string' } } }, strict: true },
    { name: 'now', input_schema: { type: 'object', properties: {} }, cache_control: { type: 'ephemeral' } },
    { name: 'later', input_schema: { type: 'object', properties: {} }, cache_control: { type: 'ephemeral', ttl: '5m' } },
  ]);
  t.notOk('tools' in translate(withFields({ tools: [] })).json, 'an empty tools list sends none');
});

t.test('tool_choice and parallel_tool_calls', async (t) => {
  const tools = [{ type: 'function', function: { name: 'f' } }];
  const named = { type: 'function', function: { name: 'f' } };
  const cases: [unknown, unknown, unknown][] = [
    [undefined, undefined, undefined],
    [undefined, true, undefined],
    [undefined, false, { type: 'auto', disable_parallel_tool_use: true }],
    ['auto', undefined, { type: 'auto' }],
    ['auto', false, { type: 'auto', disable_parallel_tool_use: true }],
    ['required', undefined, { type: 'any' }],
    ['required', false, { type: 'any', disable_parallel_tool_use: true }],
    ['none', undefined, { type: 'none' }],
    ['none', false, { type: 'none' }],
    [named, undefined, { type: 'tool', name: 'f' }],
    [named, false, { type: 'tool', name: 'f', disable_parallel_tool_use: true }],
    [named, true, { type: 'tool', name: 'f' }],
    [null, null, undefined],
  ];
  for (const [choice, parallel, expected] of cases) {
    const { json } = translate(withFields({ tools, tool_choice: choice, parallel_tool_calls: parallel }));
    t.same(json['tool_choice'], expected, `tool_choice ${JSON.stringify(choice)}, parallel_tool_calls ${String(parallel)}`);
  }
  for (const choice of ['auto', 'none', undefined]) {
    const { json } = translate(withFields({ tool_choice: choice, parallel_tool_calls: false }));
    t.notOk('tool_choice' in json, `no tools: tool_choice ${String(choice)} says nothing and is dropped`);
  }
});

t.test('sampling, stop, user, response_format, stream: mapped; stream_options never reaches Anthropic', async (t) => {
  const text =
    '{"model":"anthropic/claude","messages":[{"role":"user","content":"hi"}],"stop":"END","temperature":1.0,"top_p":0.90,' +
    '"user":"user-42","response_format":{"type":"json_schema","json_schema":{"name":"x","strict":true,"schema":{"type":"object","properties":{"n":{"type":"integer","maximum":1.0}}}}},' +
    '"stream":true,"stream_options":{"include_usage":true}}';
  const { text: out, json } = translate(text);
  t.same(json['stop_sequences'], ['END']);
  t.ok(out.includes('"temperature":1.0,"top_p":0.90'), 'numbers as written');
  t.same(json['metadata'], { user_id: 'user-42' });
  t.ok(out.includes('"output_config":{"format":{"type":"json_schema","schema":{"type":"object","properties":{"n":{"type":"integer","maximum":1.0}}}}}'));
  t.equal(json['stream'], true);
  t.notOk(out.includes('stream_options'));
  t.notOk(out.includes('include_usage'));
  t.same(translate(withFields({ stop: ['a', 'b'] })).json['stop_sequences'], ['a', 'b']);
  t.notOk('stop_sequences' in translate(withFields({ stop: [] })).json);
  t.notOk('output_config' in translate(withFields({ response_format: { type: 'text' } })).json, 'text is the default: dropped');
  t.same(translate({ model: 'a/b', messages: [{ role: 'user', content: 'hi', name: null }] }).json['messages'], [{ role: 'user', content: 'hi' }], 'a null name is not set');
  const named = refusal({ model: 'a/b', messages: [{ role: 'user', content: 'hi' }, { role: 'user', content: 'hi', name: 'bob' }] });
  t.match(named.body, { gateway_code: 'unsupported_parameter', param: 'messages[1].name' }, 'a message name has no Anthropic form: refused, not dropped');
  const image = (detail: string) => ({ model: 'a/b', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png', detail } }] }] });
  for (const detail of ['auto', 'low', 'high']) t.notOk(JSON.stringify(translate(image(detail)).json).includes('detail'), `detail "${detail}", a hint Anthropic has no counterpart for, is dropped`);
  t.match(refusal(image('ultra')).body, { gateway_code: 'invalid_request', param: 'messages[0].content[0].image_url.detail' }, 'a detail OpenAI does not know is refused');
});

t.test('OpenAI default values of fields Anthropic lacks are accepted and dropped', async (t) => {
  const defaults = { n: 1, logprobs: false, top_logprobs: 0, logit_bias: {}, presence_penalty: 0, frequency_penalty: 0.0, parallel_tool_calls: true };
  const { json } = translate(withFields(defaults));
  t.same(Object.keys(json), ['model', 'max_tokens', 'messages']);
  const nulls = Object.fromEntries([...Object.keys(defaults), 'stop', 'temperature', 'top_p', 'user', 'response_format', 'tools', 'tool_choice', 'reasoning_effort'].map((key) => [key, null]));
  t.same(Object.keys(translate(withFields(nulls)).json), ['model', 'max_tokens', 'messages'], 'null means not set');
});

t.test('fields the gateway does not model go to Anthropic with their exact bytes, in the caller order (gated ones where allowed)', async (t) => {
  const text =
    '{"top_k" : 5,"model":"anthropic/claude","service_tier":"auto","messages":[{"role":"user","content":"hi"}],' +
    '"container":{"id":"c-1","n":12345678901234567890123},"mcp_servers":[{"type":"url","url":"https://mcp.example.com","x":1.50}],"metadata":{"user_id":"u","z":1e2}}';
  const { text: out } = translate(text, { ...BUDGET_MODEL, allowedFields: ['container', 'mcp_servers', 'service_tier'] });
  t.equal(
    out,
    '{"model":"claude-sonnet-4-5","max_tokens":64000,"messages":[{"role":"user","content":"hi"}],"top_k":5,"service_tier":"auto",' +
      '"container":{"id":"c-1","n":12345678901234567890123},"mcp_servers":[{"type":"url","url":"https://mcp.example.com","x":1.50}],"metadata":{"user_id":"u","z":1e2}}',
  );
});

t.test('a caller Anthropic-native field of the same name as a translated one: merged when both are objects, else refused', async (t) => {
  const merged = translate('{"model":"a/b","messages":[{"role":"user","content":"hi"}],"metadata":{ "tenant": 1.0 },"user":"u-1"}');
  t.ok(merged.text.includes('"metadata":{"user_id":"u-1", "tenant": 1.0 }'), merged.text);
  const effort = translate('{"model":"a/b","messages":[{"role":"user","content":"hi"}],"output_config":{"format":{"type":"json_schema","schema":{}}},"reasoning_effort":"low"}', ADAPTIVE_MODEL);
  t.same(effort.json['output_config'], { effort: 'low', format: { type: 'json_schema', schema: {} } });
  t.same(translate(withFields({ thinking: { type: 'enabled', budget_tokens: 2048 } })).json['thinking'], { type: 'enabled', budget_tokens: 2048 }, 'native thinking alone passes');
  t.same(translate(withFields({ metadata: null, user: 'u' })).json['metadata'], { user_id: 'u' }, 'a null native field leaves the place to the translated one');
  const conflicts: [Record<string, unknown>, string][] = [
    [{ metadata: { user_id: 'a' }, user: 'b' }, 'metadata.user_id'],
    [{ thinking: { type: 'enabled', budget_tokens: 2048 }, reasoning_effort: 'low' }, 'thinking'],
    [{ stop_sequences: ['x'], stop: 'y' }, 'stop_sequences'],
    [{ system: 'native', messages: [{ role: 'system', content: 's' }, USER] }, 'system'],
    [{ output_config: { format: { type: 'json_schema', schema: {} } }, response_format: { type: 'json_schema', json_schema: { name: 'n', schema: {} } } }, 'output_config.format'],
    [{ output_config: 'high', response_format: { type: 'json_schema', json_schema: { name: 'n', schema: {} } } }, 'output_config'],
  ];
  for (const [fields, param] of conflicts) {
    const error = refusal(withFields(fields));
    t.match(error.body, { gateway_code: 'invalid_request', param }, param);
    t.ok(error.body.message.includes(`'${param}' is set both directly and through`), error.body.message);
    t.equal(error.status, 400);
  }
  const effortConflict = refusal(withFields({ output_config: { effort: 'low' }, reasoning_effort: 'high', response_format: { type: 'json_schema', json_schema: { name: 'n', schema: {} } } }), ADAPTIVE_MODEL);
  t.match(effortConflict.body, { param: 'output_config.effort', message: /through reasoning_effort:/ });
});

t.test('kept values are byte-exact: key order, 1.0, 20-digit integers, escapes and spacing in tool schemas, cache_control and arguments', async (t) => {
  const schema = '{ "type":"object", "properties":{"z":{"type":"number","minimum":1.0,"maximum":100000000000000000000},"a":{"enum":["\\u00e9","\\/"]}},"required":["z"] }';
  const cache = '{"type":"ephemeral","ttl":"1h","n":12345678901234567890}';
  const args = '{\\"z\\":1.0,\\"a\\":\\"\\\\u00e9\\",\\"big\\":98765432109876543210}';
  const text =
    `{"model":"a/b","messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":${cache}}]},` +
    `{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"${args}"}}]}],` +
    `"tools":[{"type":"function","function":{"name":"f","parameters":${schema}},"cache_control":${cache}}]}`;
  const { text: out } = translate(text);
  t.ok(out.includes(`"input_schema":${schema}`), 'schema bytes');
  t.equal(out.split(`"cache_control":${cache}`).length, 3, 'both cache_control objects, byte for byte');
  t.ok(out.includes('"input":{"z":1.0,"a":"\\u00e9","big":98765432109876543210}'), 'arguments JSON as written');
  t.doesNotThrow(() => JSON.parse(out));
});
