import t from 'tap';
import { readAnthropicResponse } from '../../../src/dialects/anthropic/response.js';
import { readTokenCounts } from '../../../src/observe/token-counts.js';
import { ROUTING_MODEL } from '../../helpers/anthropic-fixtures.js';

/** The translated answer, parsed, with its usage for the gateway's accounting. */
function read(body: string) {
  const translated = readAnthropicResponse(body, ROUTING_MODEL);
  if (!translated) throw new Error(`not read: ${body}`);
  return { json: JSON.parse(translated.text) as Record<string, any>, text: translated.text, usage: translated.usage };
}
const message = (content: string, rest = '"stop_reason":"end_turn","usage":{"input_tokens":12,"output_tokens":6}') =>
  `{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":${content},${rest}}`;

t.test('the documented text answer', async (t) => {
  const { json, usage } = read(message('[{"type":"text","text":"Hello!"}]'));
  const created = json['created'] as number;
  t.ok(Number.isInteger(created) && Math.abs(created - Date.now() / 1000) < 60, 'created is now, in seconds');
  t.same(json, {
    id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
    object: 'chat.completion',
    created,
    model: ROUTING_MODEL,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello!', refusal: null }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } },
  });
  t.same(usage, json['usage'], 'the accounting gets the same usage');
});

t.test('text blocks are joined as they are; no text block is null content', async (t) => {
  t.equal(read(message('[{"type":"text","text":"a "},{"type":"text","text":"b\\n"},{"type":"text","text":"c"}]')).json['choices'][0].message.content, 'a b\nc');
  t.equal(read(message('[]')).json['choices'][0].message.content, null);
  t.equal(read(message('[{"type":"text","text":""}]')).json['choices'][0].message.content, '');
});

t.test('tool_use blocks become tool calls whose arguments are the input as the provider wrote it', async (t) => {
  const content = `[
    {"type":"text","text":"Checking."},
    {"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9","name":"get_weather","input":{"location": "San Francisco, CA", "unit": "celsius"}},
    {"type":"tool_use","id":"toolu_02","name":"get_time","input":{}},
    {"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}},
    {"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},
    {"type":"tool_use","id":"toolu_03","name":"exact","input":{"n": 10000000000000000000001, "f": 1.50, "k": 1, "k": 2}, "in\\u0070ut": {"escaped": true}},
    {"type":"tool_use","id":"toolu_04","name":"none"},
    {"type":"tool_use","id":7,"name":null,"input":null}
  ]`;
  const { json } = read(message(content, '"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":2}'));
  const choice = json['choices'][0];
  t.equal(choice.finish_reason, 'tool_calls');
  t.equal(choice.message.content, 'Checking.');
  t.same(choice.message.tool_calls, [
    { id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'get_weather', arguments: '{"location": "San Francisco, CA", "unit": "celsius"}' } },
    { id: 'toolu_02', type: 'function', function: { name: 'get_time', arguments: '{}' } },
    { id: 'toolu_03', type: 'function', function: { name: 'exact', arguments: '{"escaped": true}' } },
    { id: 'toolu_04', type: 'function', function: { name: 'none', arguments: '{}' } },
    { id: '', type: 'function', function: { name: '', arguments: '{}' } },
  ], 'server tools left out; a duplicated key (escaped or not) is the one JSON.parse keeps; absent or null input is {}');
  const exact = read(message('[{"type":"tool_use","id":"t","name":"n","input":{"n": 10000000000000000000001, "f": 1.50, "k": 1, "k": 2}}]'));
  t.equal(exact.json['choices'][0].message.tool_calls[0].function.arguments, '{"n": 10000000000000000000001, "f": 1.50, "k": 1, "k": 2}', 'numbers and duplicate keys as sent');
});

t.test('thinking: reasoning_content and thinking_blocks verbatim, redacted ones included', async (t) => {
  const thinking = '{"type":"thinking","thinking":"Let me analyze this step by step...","signature":"WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve/op91XWHOEBLLqIOMfFG/UvLEczmEsUjavL...."}';
  const redacted = '{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj"}';
  const second = '{"type":"thinking","thinking":" More.","signature":"c2ln","future_field":[1.0]}';
  const { json, text } = read(message(`[${thinking},${redacted},${second},{"type":"text","text":"Answer."}]`));
  const msg = json['choices'][0].message;
  t.equal(msg.reasoning_content, 'Let me analyze this step by step... More.');
  t.equal(msg.content, 'Answer.');
  t.ok(text.includes(`"thinking_blocks":[${thinking},${redacted},${second}]`), 'the blocks are the provider text, byte for byte');
  const plain = read(message('[{"type":"text","text":"x"}]')).json['choices'][0].message;
  t.notOk('reasoning_content' in plain || 'thinking_blocks' in plain || 'tool_calls' in plain, 'absent when the answer has none');
});

t.test('stop_reason → finish_reason', async (t) => {
  const table: [string, string | null][] = [
    ['"end_turn"', 'stop'],
    ['"stop_sequence"', 'stop'],
    ['"pause_turn"', 'stop'],
    ['"max_tokens"', 'length'],
    ['"model_context_window_exceeded"', 'length'],
    ['"tool_use"', 'tool_calls'],
    ['"refusal"', 'content_filter'],
    ['"something_new"', 'stop'],
    ['"constructor"', 'stop'],
    ['null', null],
    ['{}', null],
  ];
  for (const [reason, expected] of table) {
    t.equal(read(message('[]', `"stop_reason":${reason}`)).json['choices'][0].finish_reason, expected, reason);
  }
});

t.test('usage: cache reads and writes are prompt tokens, and reported apart', async (t) => {
  const { json, usage } = read(message('[]', '"stop_reason":"end_turn","usage":{"input_tokens":50,"cache_creation_input_tokens":2000,"cache_read_input_tokens":10000,"cache_creation":{"ephemeral_5m_input_tokens":2000},"output_tokens":503,"service_tier":"standard"}'));
  const expected = { prompt_tokens: 12050, completion_tokens: 503, total_tokens: 12553, prompt_tokens_details: { cached_tokens: 10000, cache_write_tokens: 2000 } };
  t.same(json['usage'], expected);
  t.same(usage, expected);
  const none = readAnthropicResponse(message('[]', '"stop_reason":"end_turn"'), ROUTING_MODEL)!;
  t.equal(none.usage, null, 'no usage from the provider, none invented');
  t.notOk('usage' in JSON.parse(none.text));
  const bogus = read(message('[]', '"usage":{"input_tokens":"12","output_tokens":1e400,"cache_read_input_tokens":{}}'));
  t.same(bogus.json['usage'], { prompt_tokens: null, completion_tokens: null, total_tokens: null, prompt_tokens_details: { cached_tokens: null, cache_write_tokens: 0 } }, 'figures that are not counts are null to the caller');
  t.same(readTokenCounts(bogus.usage).anomalies, { prompt_tokens: 'not_a_number', completion_tokens: 'too_large', 'prompt_tokens_details.cached_tokens': 'not_a_number' }, 'and reach the accounting as they came, to be reported');
  const negative = read(message('[]', '"usage":{"input_tokens":-1,"cache_read_input_tokens":5,"output_tokens":0.5}'));
  t.same(negative.json['usage'], { prompt_tokens: null, completion_tokens: null, total_tokens: null, prompt_tokens_details: { cached_tokens: 5, cache_write_tokens: 0 } });
  t.same(readTokenCounts(negative.usage).anomalies, { prompt_tokens: 'negative', completion_tokens: 'fractional' });
});

t.test('id: made up only when the provider gave none', async (t) => {
  t.match(read('{"content":[]}').json['id'], /^chatcmpl-[0-9a-f-]{36}$/);
  t.match(read('{"id":42,"content":[]}').json['id'], /^chatcmpl-/);
  t.equal(read('{"id":"a\\"b","content":[],"model":"x","model":"y"}').json['model'], ROUTING_MODEL);
});

t.test('what is not a Messages answer is undefined (the engine answers 502)', async (t) => {
  for (const body of ['', 'not json', '<html>502</html>', '[]', 'null', '"message"', '{}', '{"content":{}}', '{"content":"text"}', '{"type":"error","error":{"type":"api_error","message":"x"}}', '{"content":[]} trailing']) {
    t.equal(readAnthropicResponse(body, ROUTING_MODEL), undefined, JSON.stringify(body));
  }
  t.equal(readAnthropicResponse('{"content":[1],"content":{"a":1}}', ROUTING_MODEL), undefined, 'the content JSON.parse keeps is what counts');
  t.ok(readAnthropicResponse('{"content":{"a":1},"content":[]}', ROUTING_MODEL));
});

t.test('hostile blocks: wrong types are absent, nothing throws, deep nesting is fine', async (t) => {
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  const { json } = read(message(`[null, 1, "text", [], {"type":1}, {"type":"text","text":5}, {"type":"thinking","thinking":{}}, {"type":"tool_use","id":"d","name":"n","input":{"x":${deep}}}]`));
  const msg = json['choices'][0].message;
  t.equal(msg.content, null);
  t.notOk('reasoning_content' in msg);
  t.same(msg.thinking_blocks, [{ type: 'thinking', thinking: {} }]);
  t.equal(msg.tool_calls[0].function.arguments, `{"x":${deep}}`);
});
