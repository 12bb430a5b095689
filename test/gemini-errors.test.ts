import { APIError } from 'openai';
import t from 'tap';
import { geminiGateway } from './helpers/mock-gemini.js';

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
