import OpenAI, { APIError } from 'openai';
import t from 'tap';
import { answerPerCandidate, candidatesResponse, geminiGateway, geminiSse, USAGE } from '../../helpers/mock-gemini.js';

// OpenAI's `n` on a gemini route: generationConfig.candidateCount, one choice per candidate at its index, whole
// and streamed, read by the official openai client (issue 34, item 18). The mock answers as many candidates as the
// request asked for (its check refuses a count Gemini would refuse).

const hi = [{ role: 'user' as const, content: 'hi' }];

t.test('n 3: candidateCount 3, three choices by index, each with its own finish reason; usage once', async (t) => {
  const { client, mock } = await geminiGateway(t, (call) => ({ json: answerPerCandidate(call, 'take') }));
  const completion = await client.chat.completions.create({ model: 'gem/flash', messages: hi, n: 3 });
  t.equal((mock.calls[0]!.body['generationConfig'] as Record<string, unknown>)['candidateCount'], 3);
  t.same(completion.choices.map((choice) => [choice.index, choice.message.content, choice.finish_reason]), [
    [0, 'take 0', 'stop'],
    [1, 'take 1', 'stop'],
    [2, 'take 2', 'stop'],
  ]);
  t.match(completion.usage, { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
  t.same(mock.violations, []);
});

t.test('candidates out of order, one calling a tool, one cut by MAX_TOKENS, index 0 left out as Google does: each choice its own', async (t) => {
  const answer = {
    candidates: [
      { content: { role: 'model', parts: [{ text: 'cut sho' }] }, finishReason: 'MAX_TOKENS', index: 1 },
      { content: { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Oslo' } } }] }, finishReason: 'STOP' },
    ],
    usageMetadata: USAGE,
  };
  const { client } = await geminiGateway(t, () => ({ json: answer }));
  const completion = await client.chat.completions.create({ model: 'gem/flash', messages: hi, n: 2 });
  t.same(completion.choices.map((choice) => [choice.index, choice.finish_reason]), [[0, 'tool_calls'], [1, 'length']]);
  t.same(completion.choices[0]!.message.tool_calls!.map((call) => (call.type === 'function' ? call.function.arguments : '')), ['{"city":"Oslo"}']);
  t.equal(completion.choices[1]!.message.content, 'cut sho');
});

t.test('streamed n 2: every chunk one choice at its candidate index, a finish reason per choice, usage once at the end', async (t) => {
  const records = [
    candidatesResponse([{ index: 0, parts: [{ text: 'Hel' }] }]),
    candidatesResponse([{ index: 1, parts: [{ text: 'Bon' }] }, { index: 0, parts: [{ text: 'lo' }] }]),
    candidatesResponse([{ index: 1, parts: [{ functionCall: { name: 'f', args: {} } }] }, { index: 0, parts: [{ text: '!' }], finishReason: 'STOP' }], { promptTokenCount: 3, totalTokenCount: 3 }),
    candidatesResponse([{ index: 1, parts: [{ text: '' }], finishReason: 'STOP' }], USAGE),
  ];
  const { client, mock } = await geminiGateway(t, () => ({ records, pieceSize: 9 }));
  const stream = await client.chat.completions.create({ model: 'gem/flash', messages: hi, n: 2, stream: true, stream_options: { include_usage: true } });
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  t.equal((mock.calls[0]!.body['generationConfig'] as Record<string, unknown>)['candidateCount'], 2);
  t.ok(chunks.every((chunk) => chunk.choices.length === (chunk.usage ? 0 : 1)), 'one choice per chunk; the usage chunk has none');
  const text = (index: number) => chunks.flatMap((chunk) => chunk.choices.filter((choice) => choice.index === index).map((choice) => choice.delta.content ?? '')).join('');
  t.equal(text(0), 'Hello!');
  t.equal(text(1), 'Bon');
  const finishes = chunks.flatMap((chunk) => chunk.choices.filter((choice) => choice.finish_reason).map((choice) => [choice.index, choice.finish_reason]));
  t.same(finishes, [[0, 'stop'], [1, 'tool_calls']], 'one finish reason per choice; the tool call in an earlier record makes STOP tool_calls');
  const calls = chunks.flatMap((chunk) => chunk.choices.flatMap((choice) => (choice.delta.tool_calls ?? []).map((call) => [choice.index, call.index, call.function?.name])));
  t.same(calls, [[1, 0, 'f']], 'tool call indexes are counted per choice');
  const usages = chunks.filter((chunk) => chunk.usage);
  t.equal(usages.length, 1);
  t.match(usages[0]!.usage, { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
  t.equal(chunks.at(-1), usages[0], 'the usage chunk is last');

  // The client's own accumulation of the same stream.
  const final = await client.chat.completions.stream({ model: 'gem/flash', messages: hi, n: 2, stream: true }).finalChatCompletion();
  t.same(final.choices.map((choice) => [choice.index, choice.message.content, choice.finish_reason]), [[0, 'Hello!', 'stop'], [1, 'Bon', 'tool_calls']]);
});

t.test('a stream where one candidate never finishes is incomplete: the gateway final error, never [DONE]', async (t) => {
  const records = [candidatesResponse([{ index: 0, parts: [{ text: 'a' }], finishReason: 'STOP' }, { index: 1, parts: [{ text: 'b' }] }], USAGE)];
  const { gateway } = await geminiGateway(t, () => ({ records }));
  const reply = await gateway.post({ model: 'gem/flash', messages: hi, n: 2, stream: true });
  const body = await reply.text();
  t.notOk(body.includes('[DONE]'));
  t.match(body, /"gateway_code":"upstream_stream_interrupted"/);
});

t.test('n 1 sends no candidateCount; n outside 1 to 8 or not an integer is refused naming n, Gemini never called', async (t) => {
  const { client, mock } = await geminiGateway(t, (call) => ({ json: answerPerCandidate(call, 'one') }));
  const one = await client.chat.completions.create({ model: 'gem/flash', messages: hi, n: 1 });
  t.same(one.choices.map((choice) => choice.message.content), ['one 0']);
  t.notOk('candidateCount' in (mock.calls[0]!.body['generationConfig'] as Record<string, unknown>));
  for (const [n, code] of [[9, 'unsupported_parameter'], [0, 'invalid_request'], [1.5, 'invalid_request'], ['2', 'invalid_request']] as const) {
    const error = await client.chat.completions.create({ model: 'gem/flash', messages: hi, n } as never).then(() => undefined, (caught: unknown) => caught);
    t.type(error, APIError, String(n));
    t.equal((error as APIError).status, 400);
    t.match((error as APIError).error, { param: 'n', gateway_code: code });
  }
  t.equal(mock.calls.length, 1);
});

t.test('a hostile Gemini: an index outside 0 to 7 or two candidates at one index is not an answer (502), streamed an error event', async (t) => {
  const twice = candidatesResponse([{ index: 1, parts: [{ text: 'a' }], finishReason: 'STOP' }, { index: 1, parts: [{ text: 'b' }], finishReason: 'STOP' }], USAGE);
  const bodies = [candidatesResponse([{ index: 8, parts: [{ text: 'x' }], finishReason: 'STOP' }]), twice, { candidates: [{ index: -1, content: { parts: [] } }] }];
  const sse = geminiSse([candidatesResponse([{ index: 0, parts: [{ text: 'fine' }] }]), candidatesResponse([{ index: 1_000_000, parts: [{ text: 'x' }] }])]);
  const { gateway } = await geminiGateway(t, (_call, n) => (n < bodies.length ? { json: bodies[n] } : { sse }));
  for (let i = 0; i < bodies.length; i++) {
    const reply = await gateway.post({ model: 'gem/flash', messages: hi, n: 2 });
    t.equal(reply.status, 502);
    t.match(((await reply.json()) as { error: unknown }).error, { gateway_code: 'invalid_upstream_response' });
  }
  const streamed = await (await gateway.post({ model: 'gem/flash', messages: hi, n: 2, stream: true })).text();
  t.match(streamed, /"content":"fine"/);
  t.match(streamed, /"gateway_code":"invalid_upstream_response"/);
  t.match(streamed, /sent a candidate outside indexes 0 to 7/);
  t.notOk(streamed.includes('[DONE]'));
});

t.test('a hostile Gemini stream whose first record has a candidate outside 0 to 7: 502 invalid_upstream_response, not a provider error', async (t) => {
  const sse = geminiSse([candidatesResponse([{ index: 9, parts: [{ text: 'x' }] }])]);
  const { gateway } = await geminiGateway(t, () => ({ sse }));
  const reply = await gateway.post({ model: 'gem/flash', messages: hi, n: 2, stream: true });
  t.equal(reply.status, 502);
  t.match(((await reply.json()) as { error: unknown }).error, { gateway_code: 'invalid_upstream_response', message: /outside indexes 0 to 7/ });
});
