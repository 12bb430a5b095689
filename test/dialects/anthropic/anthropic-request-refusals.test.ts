import t from 'tap';
import { PLAIN_MODEL, USER, refusal, translate, withFields } from '../../helpers/anthropic-request.js';

const image = (url: string) => ({ type: 'image_url', image_url: { url } });
const call = (fn: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ id: 'c1', type: 'function', function: { name: 'f', ...fn }, ...extra });
const withAssistant = (assistant: Record<string, unknown>) => ({ model: 'a/b', messages: [USER, { role: 'assistant', content: null, ...assistant }] });

t.test('fields that would change the answer and have no Anthropic form: 400 unsupported_parameter naming the field', async (t) => {
  const cases: [Record<string, unknown>, string][] = [
    [{ n: 2 }, 'n'],
    [{ n: 0 }, 'n'],
    [{ logprobs: true }, 'logprobs'],
    [{ top_logprobs: 3 }, 'top_logprobs'],
    [{ logit_bias: { '50256': -100 } }, 'logit_bias'],
    [{ presence_penalty: 0.5 }, 'presence_penalty'],
    [{ frequency_penalty: -1 }, 'frequency_penalty'],
    [{ response_format: { type: 'json_object' } }, 'response_format'],
    [{ response_format: { type: 'grammar', grammar: 'x' } }, 'response_format.type'],
  ];
  for (const [fields, param] of cases) {
    const error = refusal(withFields(fields));
    t.equal(error.status, 400, param);
    t.equal(error.retry, false);
    t.match(error.body, { type: 'invalid_request_error', code: 'unsupported_parameter', gateway_code: 'unsupported_parameter', param, origin: 'gateway' }, param);
  }
});

t.test('parts, roles, tool types and tool calls without an Anthropic form: 400 unsupported_parameter naming the path', async (t) => {
  const cases: [Record<string, unknown>, string][] = [
    [{ messages: [USER, USER, { role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }, 'messages[2].content[1]'],
    [{ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'f' } }] }] }, 'messages[0].content[0]'],
    [{ messages: [{ role: 'system', content: [image('https://example.com/a.png')] }, USER] }, 'messages[0].content[0]'],
    [{ messages: [USER, { role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] }] }, 'messages[1].content[0]'],
    [{ messages: [USER, { role: 'function', name: 'f', content: 'x' }] }, 'messages[1].role'],
    [{ messages: [USER, { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }] }, 'messages[1].function_call'],
    [withAssistant({ tool_calls: [call({}, { type: 'custom' })] }), 'messages[1].tool_calls[0]'],
    [{ messages: [{ role: 'user', content: [image('http://example.com/a.png')] }] }, 'messages[0].content[0].image_url.url'],
    [{ messages: [{ role: 'user', content: [image('file:///etc/passwd')] }] }, 'messages[0].content[0].image_url.url'],
    [{ tools: [{ type: 'function', function: { name: 'f' } }, { type: 'web_search_preview' }] }, 'tools[1]'],
    [{ tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } } }, 'tool_choice'],
  ];
  for (const [fields, param] of cases) {
    const error = refusal(withFields(fields));
    t.match(error.body, { gateway_code: 'unsupported_parameter', param }, param);
    t.ok(error.body.message.includes(param), `${param}: the message names it`);
  }
});

t.test('values that cannot be translated: 400 invalid_request naming the path', async (t) => {
  const cases: [Record<string, unknown>, string][] = [
    [withAssistant({ tool_calls: [call({ arguments: '{"a":' })] }), 'messages[1].tool_calls[0].function.arguments'],
    [withAssistant({ tool_calls: [call({ arguments: '[1,2]' })] }), 'messages[1].tool_calls[0].function.arguments'],
    [withAssistant({ tool_calls: [call({ arguments: 'null' })] }), 'messages[1].tool_calls[0].function.arguments'],
    [withAssistant({ tool_calls: [call({ arguments: '"text"' })] }), 'messages[1].tool_calls[0].function.arguments'],
    [withAssistant({ tool_calls: [call({ arguments: { a: 1 } })] }), 'messages[1].tool_calls[0].function.arguments'],
    [withAssistant({ tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }), 'messages[1].tool_calls[0].id'],
    [withAssistant({ tool_calls: [{ id: 'c', type: 'function', function: { arguments: '{}' } }] }), 'messages[1].tool_calls[0].function.name'],
    [withAssistant({ thinking_blocks: { type: 'thinking' } }), 'messages[1].thinking_blocks'],
    [withAssistant({ thinking_blocks: ['x'] }), 'messages[1].thinking_blocks[0]'],
    [{ messages: [USER, { role: 'tool', content: 'x' }] }, 'messages[1].tool_call_id'],
    [{ messages: [{ role: 'user' }] }, 'messages[0].content'],
    [{ messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] }, 'messages[0].content[0].text'],
    [{ messages: [{ role: 'user', content: [image('data:image/png,rawbytes')] }] }, 'messages[0].content[0].image_url.url'],
    [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] }, 'messages[0].content[0].image_url.url'],
    [{ tools: [{ type: 'function', function: { description: 'no name' } }] }, 'tools[0].function.name'],
    [{ tools: [{ type: 'function', function: { name: 'f', parameters: 'object' } }] }, 'tools[0].function.parameters'],
    [{ tool_choice: 'required' }, 'tool_choice'],
    [{ tool_choice: { type: 'function', function: { name: 'f' } } }, 'tool_choice'],
    [{ tools: [{ type: 'function', function: { name: 'f' } }], parallel_tool_calls: 'no' }, 'parallel_tool_calls'],
    [{ max_tokens: 0 }, 'max_tokens'],
    [{ max_tokens: 1.5 }, 'max_tokens'],
    [{ max_completion_tokens: '100' }, 'max_completion_tokens'],
    [{ max_tokens: 1e20 }, 'max_tokens'],
    [{ stop: [1] }, 'stop'],
    [{ stop: 5 }, 'stop'],
    [{ temperature: 'hot' }, 'temperature'],
    [{ top_p: [] }, 'top_p'],
    [{ user: 42 }, 'user'],
    [{ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }, 'response_format.json_schema.schema'],
  ];
  for (const [fields, param] of cases) {
    const error = refusal(withFields(fields));
    t.equal(error.status, 400, param);
    t.match(error.body, { gateway_code: 'invalid_request', param }, param);
    t.ok(error.body.message.includes(param), `${param}: the message names it`);
  }
});

t.test('reasoning_effort on a model with reasoning: none: absent or none pass, anything else is unsupported_parameter', async (t) => {
  for (const effort of [undefined, null, 'none']) {
    t.notOk('thinking' in translate(withFields({ reasoning_effort: effort }), PLAIN_MODEL).json, `reasoning_effort ${String(effort)}`);
  }
  for (const effort of ['minimal', 'low', 'medium', 'high', 'xhigh', 'max', 1, 1024, 4096]) {
    const error = refusal(withFields({ reasoning_effort: effort }), PLAIN_MODEL);
    t.match(error.body, { gateway_code: 'unsupported_parameter', param: 'reasoning_effort' }, `reasoning_effort ${effort}`);
  }
});
