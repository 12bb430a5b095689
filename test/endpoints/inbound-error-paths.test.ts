import t from 'tap';
import { CallerPaths } from '../../src/wire/caller-paths.js';
import { GatewayError, gatewayError } from '../../src/wire/gateway-error.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.js';

// A 400 about a /v1/responses or /v1/messages request names the caller's own field, never the path of the chat
// form the gateway translated it into: whichever dialect refuses it (anthropic, gemini, openai) and whether the
// schema or the dialect finds it.

const ROUTES = `version: 1
providers:
  claude:
    dialect: anthropic
    base_url: http://127.0.0.1:9/v1
    base_url_env: MOCK_BASE_URL
    api_key_env: MOCK_API_KEY
  gem:
    dialect: gemini
    base_url: http://127.0.0.1:9/v1beta
    base_url_env: MOCK_BASE_URL
    api_key_env: MOCK_API_KEY
  oai:
    base_url: http://127.0.0.1:9/v1
    base_url_env: MOCK_BASE_URL
    api_key_env: MOCK_API_KEY
models:
  claude/sonnet: { upstream_model: claude-sonnet-4-5, max_output_tokens: 64000, reasoning: budget }
  gem/flash: { upstream_model: gemini-2.5-flash, max_output_tokens: 65536, reasoning: budget, thinking_budget: { min: 0, max: 24576 } }
  oai/gpt: { upstream_model: gpt-4.1, max_output_tokens: 32768 }
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

interface Rig {
  readonly gateway: RunningGateway;
  readonly mock: MockUpstream;
}

let shared: Promise<Rig> | undefined;
/** One gateway and one mock for the file: every case here is refused before anything is sent. */
function rig(): Promise<Rig> {
  shared ??= (async () => {
    const mock = await startMockUpstream((_request, res) => void res.writeHead(500).end('{}'));
    const gateway = await startGateway({ routes: ROUTES, env: { MOCK_BASE_URL: `${mock.origin}/v1` } });
    t.teardown(() => Promise.all([gateway.close(), mock.close()]));
    return { gateway, mock };
  })();
  return shared;
}

interface Case {
  readonly label: string;
  readonly body: Record<string, unknown>;
  readonly param: string;
  /** What the message must say (it quotes the caller's path). */
  readonly message: RegExp;
}

async function refused(path: string, { body, param, message }: Case) {
  const { gateway, mock } = await rig();
  const before = mock.requests.length;
  const response = await fetch(`${gateway.origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  const error = (JSON.parse(text) as { error: { param: string; message: string } }).error;
  return { status: response.status, error, sent: mock.requests.length - before, expected: { param, message } };
}

/** The names only the chat form has: none of them may reach a caller of the other formats. */
const CHAT_NAMES = /messages\[\d+\]\.tool_calls|\.function\.|max_completion_tokens|response_format|reasoning_effort|image_url\.url|tool_call_id|'stop'|stream_options/;

const call = { type: 'function_call', call_id: 'call_1', name: 'lookup' };
const responsesCases: Case[] = [
  {
    label: 'function_call arguments that are not JSON (anthropic)',
    body: { model: 'claude/sonnet', instructions: 'be brief', input: [{ role: 'user', content: 'hi' }, { ...call, arguments: 'not json' }, { type: 'function_call_output', call_id: 'call_1', output: 'x' }] },
    param: 'input[1].arguments',
    message: /^Invalid 'input\[1\]\.arguments': not JSON/,
  },
  {
    label: 'function_call arguments that are not a JSON object (gemini), after an assistant message it joins',
    body: { model: 'gem/flash', input: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'let me look' }, { ...call, arguments: '[1]' }, { type: 'function_call_output', call_id: 'call_1', output: 'x' }] },
    param: 'input[2].arguments',
    message: /^Invalid 'input\[2\]\.arguments'/,
  },
  { label: 'max_output_tokens over the model (anthropic)', body: { model: 'claude/sonnet', input: 'hi', max_output_tokens: 100000 }, param: 'max_output_tokens', message: /^'max_output_tokens' 100000 is more than this model can write/ },
  { label: 'max_output_tokens over the model (openai)', body: { model: 'oai/gpt', input: 'hi', max_output_tokens: 40000 }, param: 'max_output_tokens', message: /^'max_output_tokens' 40000 is more than/ },
  { label: 'max_output_tokens over the model (gemini)', body: { model: 'gem/flash', input: 'hi', max_output_tokens: 70000 }, param: 'max_output_tokens', message: /^Invalid 'max_output_tokens': this model writes at most 65536/ },
  { label: 'a reasoning effort no schema knows', body: { model: 'oai/gpt', input: 'hi', reasoning: { effort: 'extreme' } }, param: 'reasoning.effort', message: /^Invalid value for 'reasoning\.effort'/ },
  {
    label: 'function tool parameters that are not an object (gemini)',
    body: { model: 'gem/flash', input: 'hi', tools: [{ type: 'function', name: 'a', parameters: { type: 'object' } }, { type: 'function', name: 'b', parameters: 'x' }] },
    param: 'tools[1].parameters',
    message: /^Invalid 'tools\[1\]\.parameters'/,
  },
  { label: 'text.format json_object (anthropic)', body: { model: 'claude/sonnet', input: 'hi', text: { format: { type: 'json_object' } } }, param: 'text.format', message: /'text\.format' json_object is not supported/ },
  { label: 'text.format json_schema without a schema (anthropic)', body: { model: 'claude/sonnet', input: 'hi', text: { format: { type: 'json_schema', name: 'x' } } }, param: 'text.format.schema', message: /^Missing 'text\.format\.schema'/ },
  {
    label: 'an input_image by URL to gemini, after instructions',
    body: { model: 'gem/flash', instructions: 'look', input: [{ role: 'user', content: [{ type: 'input_text', text: 'what is this' }, { type: 'input_image', image_url: 'https://example.com/a.png' }] }] },
    param: 'input[0].content[1].image_url',
    message: /^Invalid 'input\[0\]\.content\[1\]\.image_url': the gateway sends Gemini images only as data: URLs/,
  },
  { label: 'temperature that is not a number (anthropic): a field of the same name keeps it', body: { model: 'claude/sonnet', input: 'hi', temperature: 'hot' }, param: 'temperature', message: /^Invalid 'temperature'/ },
];

const toolUse = { type: 'tool_use', id: 'toolu_1', name: 'lookup' };
const messagesCases: Case[] = [
  {
    label: 'a tool_use input that is not an object (gemini), after a system prompt',
    body: { model: 'gem/flash', max_tokens: 100, system: 'be brief', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'text', text: 'looking' }, { ...toolUse, input: 'x' }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] }] },
    param: 'messages[1].content[1].input',
    message: /^Invalid 'messages\[1\]\.content\[1\]\.input'/,
  },
  {
    label: 'an image by URL after a tool_result (gemini): the block, not the chat part',
    body: {
      model: 'gem/flash',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ ...toolUse, input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }, { type: 'text', text: 'and this?' }, { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] },
      ],
    },
    param: 'messages[2].content[2].source',
    message: /^Invalid 'messages\[2\]\.content\[2\]\.source'/,
  },
  { label: 'max_tokens over the model (openai)', body: { model: 'oai/gpt', max_tokens: 40000, messages: [{ role: 'user', content: 'hi' }] }, param: 'max_tokens', message: /^'max_tokens' 40000 is more than this model can write/ },
  { label: 'max_tokens over the model (gemini)', body: { model: 'gem/flash', max_tokens: 70000, messages: [{ role: 'user', content: 'hi' }] }, param: 'max_tokens', message: /^Invalid 'max_tokens': this model writes at most/ },
  {
    label: 'a tool input_schema that is not an object (gemini)',
    body: { model: 'gem/flash', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], tools: [{ name: 'a', input_schema: 'x' }] },
    param: 'tools[0].input_schema',
    message: /^Invalid 'tools\[0\]\.input_schema'/,
  },
  { label: 'stop_sequences that are not strings (gemini)', body: { model: 'gem/flash', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], stop_sequences: [1] }, param: 'stop_sequences', message: /^Invalid 'stop_sequences'/ },
  {
    label: 'disable_parallel_tool_use (gemini)',
    body: { model: 'gem/flash', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], tools: [{ name: 'a', input_schema: { type: 'object' } }], tool_choice: { type: 'auto', disable_parallel_tool_use: true } },
    param: 'tool_choice.disable_parallel_tool_use',
    message: /^'tool_choice\.disable_parallel_tool_use' false has no Gemini form/,
  },
];

for (const [path, cases] of [['/v1/responses', responsesCases], ['/v1/messages', messagesCases]] as const) {
  for (const item of cases) {
    t.test(`${path}: ${item.label} is a 400 naming ${item.param}`, async (t) => {
      const { status, error, sent, expected } = await refused(path, item);
      t.equal(status, 400);
      t.equal(error.param, expected.param);
      t.match(error.message, expected.message);
      t.notMatch(error.message, CHAT_NAMES, 'no name of the chat form in the message');
      t.equal(sent, 0, 'nothing was sent');
    });
  }
}

t.test('CallerPaths: the nearest recorded ancestor names a path, its inner renames apply, an error naming no param is left as it came', (t) => {
  const paths = new CallerPaths();
  paths.set('messages', 'input');
  paths.set('messages[2]', 'input[5]');
  paths.set('messages[2].tool_calls[1]', 'input[7]', { '.function': '', '.id': '.call_id' });
  t.equal(paths.callerPath('messages[2].tool_calls[1].function.arguments'), 'input[7].arguments');
  t.equal(paths.callerPath('messages[2].tool_calls[1].id'), 'input[7].call_id');
  t.equal(paths.callerPath('messages[2].tool_calls[10].id'), 'input[5].tool_calls[10].id', 'tool_calls[10] is not under tool_calls[1]');
  t.equal(paths.callerPath('messages[3].content'), 'input[3].content', 'an unrecorded message keeps its index under the renamed field');
  t.equal(paths.callerPath('messages_extra'), 'messages_extra', 'a key that merely starts the same is not under it');
  t.equal(paths.callerPath('temperature'), 'temperature');
  const named = paths.named(gatewayError('invalid_request', `Invalid 'messages[2].tool_calls[1].function.arguments': not JSON; see 'messages[0]'.`, { param: 'messages[2].tool_calls[1].function.arguments' }));
  t.match((named as GatewayError).body, { param: 'input[7].arguments', message: `Invalid 'input[7].arguments': not JSON; see 'input[0]'.` });
  const unnamed = gatewayError('invalid_request', `The provider said 'messages[2]' is wrong.`);
  t.equal(paths.named(unnamed), unnamed, 'an error naming no param (a provider error passed on) is left as it came');
  t.end();
});
