import { APIError } from 'openai';
import t from 'tap';
import { bedrockGateway } from '../../helpers/bedrock-gateway.js';
import { textAnswer, textEvents, type StreamEvent } from '../../helpers/mock-bedrock.js';

// Bedrock's errors through a bedrock route: the exception's name (x-amzn-errortype, else __type) is provider_code,
// the message stays verbatim, the status goes through the routes.yaml error rules; in-stream exceptions before the
// first content are that status, after it the in-stream error event.

async function failure(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof APIError) return error;
    throw error;
  }
  throw new Error('the request succeeded');
}

const ask = { model: 'brk/nova', messages: [{ role: 'user' as const, content: 'hi' }] };

t.test('HTTP errors: the code from x-amzn-errortype (else __type), message or Message verbatim, each status by its rule', async (t) => {
  const answers = [
    { status: 400, errorType: 'ValidationException', json: { message: 'The provided model identifier is invalid.' } },
    { status: 403, errorType: 'AccessDeniedException', json: { Message: 'You don\'t have access to the model with the specified model ID.' } },
    { status: 429, json: { __type: 'com.amazonaws.bedrock#ThrottlingException', message: 'Too many requests, please wait before trying again.' } },
    { status: 503, errorType: 'ServiceUnavailableException', json: { message: 'Bedrock is unable to process your request.' } },
    { status: 408, errorType: 'ModelTimeoutException', json: { message: 'Model has timed out in processing the request.' } },
    { status: 424, errorType: 'ModelErrorException', json: { message: 'The model failed.' } },
    { status: 500, json: '<html>oops</html>' },
  ];
  const { client, mock } = await bedrockGateway(t, (_call, n) => answers[n]!);
  const expected = [
    { status: 400, retry: 'false', error: { provider_code: 'ValidationException', message: 'The provided model identifier is invalid.', gateway_code: 'provider_rejected_request' } },
    { status: 502, retry: 'false', error: { provider_code: 'AccessDeniedException', message: "You don't have access to the model with the specified model ID.", gateway_code: 'provider_auth_failed' } },
    { status: 429, retry: 'true', error: { provider_code: 'ThrottlingException', message: 'Too many requests, please wait before trying again.', gateway_code: 'provider_rate_limited' } },
    { status: 503, retry: 'true', error: { provider_code: 'ServiceUnavailableException', gateway_code: 'provider_overloaded' } },
    { status: 504, retry: 'true', error: { provider_code: 'ModelTimeoutException', gateway_code: 'provider_timeout' } },
    { status: 502, retry: 'false', error: { provider_code: 'ModelErrorException', gateway_code: 'provider_error' } },
    { status: 502, retry: 'true', error: { provider_code: null, provider_status: 500 } },
  ];
  for (const [i, want] of expected.entries()) {
    const error = await failure(client.chat.completions.create(ask));
    t.equal(error.status, want.status, `answer ${i}`);
    t.match(error.error, { provider: 'brk', provider_status: answers[i]!.status, ...want.error }, `answer ${i}`);
    t.equal(error.headers?.get('x-should-retry'), want.retry, `answer ${i} retry`);
  }
  t.equal(mock.calls.length, answers.length, 'each sent once: one endpoint, no fallback');
});

const EXCEPTIONS: readonly [string, number, number][] = [
  ['throttlingException', 429, 429],
  ['validationException', 400, 400],
  ['modelStreamErrorException', 424, 502],
  ['internalServerException', 500, 502],
  ['serviceUnavailableException', 503, 503],
];

t.test('an exception before the first content is a failure of its status, through the error rules', async (t) => {
  const { client } = await bedrockGateway(t, (call, n) => ({ events: [{ messageStart: { role: 'assistant' } }, { exception: EXCEPTIONS[n]![0], message: `said ${n}` }], pieceSize: 5 }));
  for (const [i, [type, providerStatus, status]] of EXCEPTIONS.entries()) {
    const error = await failure(client.chat.completions.create({ ...ask, stream: true }));
    t.equal(error.status, status, type);
    t.match(error.error, { provider: 'brk', provider_status: providerStatus, provider_code: type, message: `said ${i}` }, type);
  }
});

t.test('fallback across dialects: a bedrock 429 to the openai route, and an openai 503 back to bedrock, each built by its dialect', async (t) => {
  const { createServer } = await import('node:http');
  let openaiStatus = 200;
  const openai = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (openaiStatus !== 200) {
        res.writeHead(openaiStatus, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4.1', choices: [{ index: 0, message: { role: 'assistant', content: 'from openai' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
    });
  });
  await new Promise<void>((resolve) => openai.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => openai.close(() => resolve())));
  const origin = `http://127.0.0.1:${(openai.address() as { port: number }).port}`;
  const { client, mock } = await bedrockGateway(t, (_call, n) => (n === 0 ? { status: 429, errorType: 'ThrottlingException', json: { message: 'slow down' } } : { json: textAnswer('from bedrock') }), { upstreamOrigin: origin });
  const answer = await client.chat.completions.create({ model: 'brk/sonnet', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(answer.choices[0]!.message.content, 'from openai');
  t.equal(answer.model, 'brk/sonnet');
  t.equal(mock.calls.length, 1);
  openaiStatus = 503;
  const back = await client.chat.completions.create({ model: 'backup/gpt-4.1', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(back.choices[0]!.message.content, 'from bedrock');
  t.equal(mock.calls[1]!.rawPath, '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse');
  t.strictSame(mock.violations, []);
});

t.test('an exception after the first content: the in-stream error event with its code and message, no [DONE]', async (t) => {
  const events: StreamEvent[] = [...textEvents(['Hel', 'lo']).slice(0, 3), { exception: 'modelStreamErrorException', message: 'The model stream broke.' }];
  const { gateway } = await bedrockGateway(t, () => ({ events, pieceSize: 9 }));
  const response = await gateway.post({ ...ask, stream: true });
  t.equal(response.status, 200);
  const text = await response.text();
  t.match(text, /"content":"Hel"/);
  t.notMatch(text, /\[DONE\]/);
  const last = JSON.parse(text.trim().split('\n\n').at(-1)!.replace(/^data: /, '')) as { error: Record<string, unknown> };
  t.match(last.error, { gateway_code: 'provider_stream_error', provider: 'brk', provider_code: 'modelStreamErrorException', message: 'The model stream broke.' });
});

t.test("the mock's verify hook (for signatures) sees the exact path and body bytes, and its refusal is AWS's 403", async (t) => {
  const seen: { url: string | undefined; body: string }[] = [];
  const { client, mock } = await bedrockGateway(t, () => ({ json: textAnswer('unused') }), {
    mock: {
      verify(req, bodyBytes) {
        seen.push({ url: req.url, body: bodyBytes.toString() });
        return 'The request signature we calculated does not match the signature you provided.';
      },
    },
  });
  const error = await failure(client.chat.completions.create(ask));
  t.equal(error.status, 502);
  t.match(error.error, { provider_status: 403, provider_code: 'InvalidSignatureException', message: /signature we calculated does not match/, gateway_code: 'provider_auth_failed' });
  t.same(seen, [{ url: '/model/amazon.nova-pro-v1%3A0/converse', body: mock.calls[0]!.bodyBytes.toString() }]);
});

t.test('auth: bearer with its api_key_env unset behaves as today: 500 provider_not_configured naming it, nothing sent', async (t) => {
  const { client, mock, gateway } = await bedrockGateway(t, () => ({ json: textAnswer('unused') }), { env: { MOCK_API_KEY: '' } });
  const error = await failure(client.chat.completions.create(ask));
  t.equal(error.status, 500);
  t.match(error.error, { gateway_code: 'provider_not_configured', provider: 'brk', message: /MOCK_API_KEY/ });
  t.equal(error.headers?.get('x-should-retry'), 'false');
  t.equal(mock.calls.length, 0);
  t.match(gateway.warnings.join('\n'), /brk \(MOCK_API_KEY\)/);
});

t.test('a Bedrock API key the provider quotes back is [redacted] in the error and in the stream', async (t) => {
  const { PROVIDER_KEY } = await import('../../helpers/gateway.js');
  const { client, gateway } = await bedrockGateway(t, (call) =>
    call.stream ? { events: textEvents([`key ${PROVIDER_KEY} echoed`]) } : { status: 400, errorType: 'ValidationException', json: { message: `Bad key ${PROVIDER_KEY}` } },
  );
  const error = await failure(client.chat.completions.create(ask));
  t.match(error.error, { message: 'Bad key [redacted]' });
  const text = await (await gateway.post({ ...ask, stream: true })).text();
  t.match(text, /key \[redacted\] echoed/);
  t.notMatch(text, PROVIDER_KEY);
});
