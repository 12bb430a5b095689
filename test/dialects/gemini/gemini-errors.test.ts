import OpenAI, { APIError } from 'openai';
import t from 'tap';
import { GEMINI_ROUTES, geminiGateway, geminiSse, response, USAGE } from '../../helpers/mock-gemini.js';
import { completionBody, sendJson, startMockUpstream } from '../../helpers/mock-upstream.js';

// Gemini's error bodies through a gemini route: the status word becomes provider_code, the message stays.

const googleError = (code: number, status: string, message: string) => ({ error: { code, message, status } });

async function failure(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof APIError) return error;
    throw error;
  }
  throw new Error('the request succeeded');
}

t.test('an error object: 429 RESOURCE_EXHAUSTED', async (t) => {
  const { client, mock } = await geminiGateway(t, () => ({ status: 429, json: googleError(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for metric generate_content') }));
  const error = await failure(client.chat.completions.create({ model: 'gem/plain', messages: [{ role: 'user', content: 'hi' }] }));
  t.equal(error.status, 429);
  t.match(error.error, { provider: 'gem', provider_status: 429, provider_code: 'RESOURCE_EXHAUSTED', message: 'Quota exceeded for metric generate_content', gateway_code: 'provider_rate_limited' });
  t.equal(error.headers?.get('x-should-retry'), 'true');
  t.equal(mock.calls.length, 1);
});

t.test('an error wrapped in an array, as streaming endpoints send it: 400 INVALID_ARGUMENT, not retried', async (t) => {
  const { client } = await geminiGateway(t, () => ({ status: 400, json: [googleError(400, 'INVALID_ARGUMENT', 'Function call is missing a thought_signature')] }));
  const error = await failure(client.chat.completions.create({ model: 'gem/plain', messages: [{ role: 'user', content: 'hi' }], stream: true }));
  t.equal(error.status, 400);
  t.match(error.error, { provider_code: 'INVALID_ARGUMENT', message: 'Function call is missing a thought_signature', gateway_code: 'provider_rejected_request' });
  t.equal(error.headers?.get('x-should-retry'), 'false');
});

t.test('503 UNAVAILABLE and 504 DEADLINE_EXCEEDED are retryable; a body that is not Google JSON still answers', async (t) => {
  const bodies = [
    { status: 503, json: googleError(503, 'UNAVAILABLE', 'The model is overloaded.') },
    { status: 504, json: googleError(504, 'DEADLINE_EXCEEDED', 'Deadline expired before operation could complete.') },
    { status: 500, json: '<html>oops</html>' },
  ];
  const { client } = await geminiGateway(t, (_call, n) => bodies[n]!);
  const overloaded = await failure(client.chat.completions.create({ model: 'gem/plain', messages: [{ role: 'user', content: 'hi' }] }));
  t.match(overloaded.error, { provider_code: 'UNAVAILABLE', gateway_code: 'provider_overloaded' });
  t.equal(overloaded.headers?.get('x-should-retry'), 'true');
  const deadline = await failure(client.chat.completions.create({ model: 'gem/plain', messages: [{ role: 'user', content: 'hi' }] }));
  t.match(deadline.error, { provider_code: 'DEADLINE_EXCEEDED', provider_status: 504 });
  t.equal(deadline.headers?.get('x-should-retry'), 'true');
  const html = await failure(client.chat.completions.create({ model: 'gem/plain', messages: [{ role: 'user', content: 'hi' }] }));
  t.match(html.error, { provider_code: null, provider_status: 500 });
});

// An error record that opens the stream (issue 34, item 13): answered exactly as the same error over HTTP, by
// its code, else its status word: an in-band 429 is a retryable 429, an in-band 400 a 400 that neither fails over
// nor counts against the endpoint's breaker.

/** The caller's view of a failed streamed request: the status, the envelope and whether to retry. */
async function streamedFailure(client: OpenAI) {
  const error = await failure(client.chat.completions.create({ model: 'gem/plain', messages: [{ role: 'user', content: 'hi' }], stream: true }));
  return { status: error.status, error: error.error, retry: error.headers?.get('x-should-retry') };
}

t.test('an error record before the first event is answered as the same error over HTTP: by its code, else its status word', async (t) => {
  const errors = [
    googleError(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for metric generate_content'),
    googleError(400, 'INVALID_ARGUMENT', 'Function call is missing a thought_signature'),
    googleError(503, 'UNAVAILABLE', 'The model is overloaded.'),
  ];
  // Each error twice: over HTTP (as a streaming endpoint sends it, in an array), then as the stream's first record.
  const { client, mock } = await geminiGateway(t, (_call, n) => {
    const error = errors[Math.floor(n / 2)]!;
    return n % 2 === 0 ? { status: error.error.code, json: [error] } : { sse: geminiSse([error]) };
  });
  for (const { error } of errors) {
    const overHttp = await streamedFailure(client);
    const inBand = await streamedFailure(client);
    t.equal(overHttp.status, error.code, error.status);
    t.same(inBand, overHttp, `${error.status}: the same status, envelope and retry advice`);
  }
  t.equal(mock.calls.length, 6);
  t.ok(mock.calls.every((call) => call.stream));
});

t.test('an error record with a status word and no code stands for its status; with neither, 500', async (t) => {
  const records = [{ error: { message: 'Quota', status: 'RESOURCE_EXHAUSTED' } }, { error: { message: 'denied', status: 'PERMISSION_DENIED', code: 'x' } }, { error: { message: 'odd' } }];
  const { client } = await geminiGateway(t, (_call, n) => ({ sse: geminiSse([records[n]]) }));
  t.match(await streamedFailure(client), { status: 429, retry: 'true', error: { provider_status: 429, provider_code: 'RESOURCE_EXHAUSTED', gateway_code: 'provider_rate_limited' } });
  t.match(await streamedFailure(client), { status: 400, retry: 'false', error: { provider_status: 403, provider_code: 'PERMISSION_DENIED' } });
  t.match(await streamedFailure(client), { status: 502, error: { provider_status: 500, provider_code: null, message: 'odd' } });
});

t.test('in-band 400s are not failed over and do not open the breaker', async (t) => {
  const openai = await startMockUpstream((_request, res) => sendJson(res, 200, completionBody('gpt-4.1', 'from openai')));
  t.teardown(() => openai.close());
  // One failure ejects gem: a 400 counted as its failure would send the next gem/flash request to the fallback.
  const routes = GEMINI_ROUTES.replace('    errors:\n      "503"', '    breaker: { consecutive_failures: 1, cooldown_ms: 300000 }\n    errors:\n      "503"');
  const refused = geminiSse([googleError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.')]);
  const { client, mock } = await geminiGateway(t, (_call, n) => (n < 3 ? { sse: refused } : { records: [response([{ text: 'from gemini' }], 'STOP', USAGE)] }), { routes, upstreamOrigin: openai.origin });
  for (let i = 0; i < 3; i++) {
    const error = await failure(client.chat.completions.create({ model: 'gem/flash', messages: [{ role: 'user', content: 'hi' }], stream: true }));
    t.equal(error.status, 400);
    t.match(error.error, { gateway_code: 'provider_rejected_request', provider_status: 400, provider_code: 'INVALID_ARGUMENT' });
  }
  const { data, response: reply } = await client.chat.completions.create({ model: 'gem/flash', messages: [{ role: 'user', content: 'hi' }], stream: true }).withResponse();
  let text = '';
  for await (const chunk of data) text += chunk.choices[0]?.delta.content ?? '';
  t.equal(text, 'from gemini');
  t.equal(reply.headers.get('x-gateway-served-by'), 'gem/flash#0', 'the endpoint was not ejected');
  t.equal(openai.requests.length, 0, 'nothing was failed over');
  t.equal(mock.calls.length, 4);
});
