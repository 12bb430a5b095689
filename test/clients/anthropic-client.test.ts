import { APIError, BadRequestError } from 'openai';
import t from 'tap';
import { setUpAnthropicClient } from './anthropic-client.js';
import { message } from '../helpers/mock-anthropic.js';

// The official openai client against anthropic-dialect routes, a real node:http provider speaking the
// Messages API behind them (issue 11). Every request the provider sees is checked against Anthropic's contract.

const setUp = setUpAnthropicClient;

const user = (content: string) => ({ role: 'user' as const, content });

t.test('text: system prompt, default max_tokens from routes.yaml, usage with cache counts', async (t) => {
  const usage = { input_tokens: 100, output_tokens: 7, cache_read_input_tokens: 3000, cache_creation_input_tokens: 200 };
  const { upstream, client, wireChecked } = await setUp(t, () => ({ json: message([{ type: 'text', text: 'Hello' }, { type: 'text', text: ' there' }], 'end_turn', usage) }));
  const completion = await client.chat.completions.create({
    model: 'claude/plain',
    messages: [{ role: 'system', content: 'Be brief.' }, user('Say hi')],
    temperature: 0.5,
  });
  t.match(completion, { id: 'msg_01Test', object: 'chat.completion', model: 'claude/plain' });
  t.equal(completion.choices.length, 1);
  t.match(completion.choices[0], { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Hello there', refusal: null } });
  t.strictSame(completion.usage as unknown, {
    prompt_tokens: 3300,
    completion_tokens: 7,
    total_tokens: 3307,
    prompt_tokens_details: { cached_tokens: 3000, cache_write_tokens: 200 },
  });
  t.match(upstream.bodies[0], { model: 'claude-plain-1', max_tokens: 8192, temperature: 0.5, system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user' }] });
  t.notOk('thinking' in upstream.bodies[0]!, 'no thinking unless asked');
  wireChecked();
});

t.test('tool calls: several in one turn, one without arguments, tool_choice and parallel_tool_calls mapped', async (t) => {
  const { upstream, client, wireChecked } = await setUp(t, () => ({
    json: message(
      [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris', unit: 'c' } },
        { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
      ],
      'tool_use',
    ),
  }));
  const weather = { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string' } }, required: ['location'] };
  const completion = await client.chat.completions.create({
    model: 'claude/plain',
    messages: [user('Weather and time in Paris?')],
    tools: [
      { type: 'function', function: { name: 'get_weather', description: 'Weather now', parameters: weather } },
      { type: 'function', function: { name: 'get_time' } },
    ],
    tool_choice: 'required',
    parallel_tool_calls: false,
  });
  const choice = completion.choices[0]!;
  t.equal(choice.finish_reason, 'tool_calls');
  t.equal(choice.message.content, 'Checking.');
  const calls = (choice.message.tool_calls ?? []).map((call) => (call.type === 'function' ? [call.id, call.function.name, JSON.parse(call.function.arguments)] : []));
  t.strictSame(calls, [
    ['toolu_1', 'get_weather', { location: 'Paris', unit: 'c' }],
    ['toolu_2', 'get_time', {}],
  ]);
  t.equal(choice.message.tool_calls?.[1]?.type === 'function' && choice.message.tool_calls[1].function.arguments, '{}', 'an argument-less call is {} (never "")');
  t.match(upstream.bodies[0], {
    tools: [
      { name: 'get_weather', description: 'Weather now', input_schema: weather },
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
    ],
    tool_choice: { type: 'any', disable_parallel_tool_use: true },
  });
  wireChecked();
});

t.test('a tool round trip: thinking_blocks come back verbatim and are replayed first on the assistant turn', async (t) => {
  const thinking = [
    { type: 'thinking', thinking: 'I need the weather.', signature: 'sig-EqQBCgIYAhIM==' },
    { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a==' },
  ];
  const { upstream, client, wireChecked } = await setUp(t, (_body, call) =>
    call === 0
      ? { json: message([...thinking, { type: 'tool_use', id: 'toolu_9', name: 'get_weather', input: { location: 'Oslo' } }], 'tool_use') }
      : { json: message([{ type: 'text', text: 'It is cold.' }], 'end_turn') },
  );
  const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }];
  const first = await client.chat.completions.create({ model: 'claude/budget', messages: [user('Weather in Oslo?')], tools, reasoning_effort: 'medium' });
  const reply = first.choices[0]!.message as unknown as Record<string, unknown> & typeof first.choices[0]['message'];
  t.equal(reply['reasoning_content'], 'I need the weather.');
  t.strictSame(reply['thinking_blocks'], thinking, 'thinking blocks with their signature and data, as sent');
  t.match(upstream.bodies[0], { model: 'claude-sonnet-4-5', thinking: { type: 'enabled', budget_tokens: 8192 } });

  const assistant = { role: 'assistant', content: null, tool_calls: reply.tool_calls, thinking_blocks: reply['thinking_blocks'] };
  const second = await client.chat.completions.create({
    model: 'claude/budget',
    messages: [user('Weather in Oslo?'), assistant as never, { role: 'tool', tool_call_id: 'toolu_9', content: '-5 °C' }],
    tools,
    reasoning_effort: 'medium',
  });
  t.equal(second.choices[0]!.message.content, 'It is cold.');
  t.strictSame(upstream.bodies[1]!['messages'], [
    { role: 'user', content: 'Weather in Oslo?' },
    { role: 'assistant', content: [...thinking, { type: 'tool_use', id: 'toolu_9', name: 'get_weather', input: { location: 'Oslo' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: '-5 °C' }] },
  ]);
  wireChecked();
});

t.test('reasoning_effort on each kind of model', async (t) => {
  const { upstream, client, wireChecked } = await setUp(t, () => ({ json: message([{ type: 'text', text: 'ok' }], 'end_turn') }));
  const ask = async (model: string, effort: unknown, extra: Record<string, unknown> = {}) => {
    const before = upstream.bodies.length;
    await client.chat.completions.create({ model, messages: [user('think')], reasoning_effort: effort as never, ...extra });
    t.equal(upstream.bodies.length, before + 1);
    return upstream.bodies.at(-1)!;
  };
  const refused = async (model: string, effort: unknown, extra: Record<string, unknown> = {}) => {
    const before = upstream.bodies.length;
    const error = await ask(model, effort, extra).catch((e: unknown) => e);
    t.type(error, BadRequestError, `${model} ${JSON.stringify(effort)}`);
    t.equal((error as BadRequestError).param, 'reasoning_effort');
    t.equal(upstream.bodies.length, before, 'nothing reached the provider');
    return (error as BadRequestError).error as Record<string, unknown>;
  };

  t.match(await refused('claude/plain', 'high'), { gateway_code: 'unsupported_parameter' }, 'a model that does not think');
  t.notOk('thinking' in (await ask('claude/plain', 'none')), 'none: no thinking');
  t.match(await ask('claude/budget', 'high'), { thinking: { type: 'enabled', budget_tokens: 16384 }, max_tokens: 64000 });
  const clamped = (await ask('claude/budget', 'high', { max_tokens: 2000 }))['thinking'] as { budget_tokens: number };
  t.ok(clamped.budget_tokens >= 1024 && clamped.budget_tokens < 2000, `high under max_tokens 2000 still thinks (${clamped.budget_tokens})`);
  t.match(await ask('claude/budget', 4096), { thinking: { type: 'enabled', budget_tokens: 4096 } }, 'an integer is the budget');
  await refused('claude/budget', 500);
  t.match(await ask('claude/adaptive', 'minimal'), { thinking: { type: 'adaptive' }, output_config: { effort: 'low' }, max_tokens: 128000 });
  t.match(await ask('claude/adaptive', 20000), { thinking: { type: 'adaptive' }, output_config: { effort: 'high' } });
  await refused('claude/adaptive', 'bogus');
  wireChecked();
});

t.test('each stop_reason as its finish_reason', async (t) => {
  const cases = [
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
  ] as const;
  const { client, wireChecked } = await setUp(t, (body) => {
    const stop = String((body['metadata'] as Record<string, unknown>)['user_id']);
    const blocks = stop === 'tool_use' ? [{ type: 'tool_use', id: 'toolu_s', name: 'f', input: {} }] : [{ type: 'text', text: 'x' }];
    return { json: message(blocks, stop) };
  });
  for (const [stop, finish] of cases) {
    const completion = await client.chat.completions.create({ model: 'claude/plain', messages: [user('go')], user: stop });
    t.equal(completion.choices[0]!.finish_reason, finish, `${stop} -> ${finish}`);
  }
  wireChecked();
});

t.test("Anthropic's error body: 529 overloaded answers 503, retryable, with its type and message", async (t) => {
  const { client, wireChecked } = await setUp(t, () => ({ status: 529, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }));
  const error = await client.chat.completions.create({ model: 'claude/plain', messages: [user('hi')] }).catch((e: unknown) => e);
  t.type(error, APIError);
  const apiError = error as APIError;
  t.equal(apiError.status, 503);
  t.equal(apiError.headers?.get('x-should-retry'), 'true');
  t.match(apiError.error, { message: 'Overloaded', code: 'upstream_overloaded', gateway_code: 'provider_overloaded', provider: 'claude', provider_status: 529, provider_code: 'overloaded_error' });
  wireChecked();
});
