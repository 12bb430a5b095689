// POST /v1/embeddings refuses, before anything is sent: every malformed request (400 invalid_request_error in the
// OpenAI envelope, x-should-retry false), an off-roster model (as chat does), a model of the other kind on every
// endpoint; and the model list stays absent, its 404 saying where the routing strings are.
import t, { type Test } from 'tap';
import { envelopeOf } from '../helpers/gateway.js';
import { startEmbeddingsRig } from '../helpers/embeddings-rig.js';

const rig = await startEmbeddingsRig({ maxBodyBytes: 64 * 1024 });
t.teardown(() => rig.close());

async function refused(t: Test, response: Response, status: number, param: string | null, gatewayCode: string) {
  const before = rig.mock.requests.length;
  t.equal(response.status, status);
  t.equal(response.headers.get('x-should-retry'), 'false');
  const error = await envelopeOf(response);
  t.equal(error['type'], 'invalid_request_error');
  t.equal(error['param'], param);
  t.equal(error['gateway_code'], gatewayCode);
  t.equal(error['provider'], null);
  t.equal(error['provider_status'], null);
  t.equal(rig.mock.requests.length, before, 'nothing sent upstream');
  return error;
}

const BAD: readonly [string, unknown, string | null][] = [
  ['not an object', [1, 2], null],
  ['no model', { input: 'x' }, 'model'],
  ['model not a string', { model: 7, input: 'x' }, 'model'],
  ['no input', { model: 'oai/embed' }, 'input'],
  ['empty string', { model: 'oai/embed', input: '' }, 'input'],
  ['empty array', { model: 'oai/embed', input: [] }, 'input'],
  ['2049 inputs', { model: 'oai/embed', input: Array.from({ length: 2049 }, () => 'a') }, 'input'],
  ['a number', { model: 'oai/embed', input: 5 }, 'input'],
  ['an object', { model: 'oai/embed', input: { text: 'x' } }, 'input'],
  ['true', { model: 'oai/embed', input: true }, 'input'],
  ['null', { model: 'oai/embed', input: null }, 'input'],
  ['fractional token ids', { model: 'oai/embed', input: [1, 2.5] }, 'input[1]'],
  ['negative token id', { model: 'oai/embed', input: [-1] }, 'input[0]'],
  ['mixed strings and ids', { model: 'oai/embed', input: ['a', 1] }, 'input[1]'],
  ['a string inside token arrays', { model: 'oai/embed', input: [[1, 2], [3, 'x']] }, 'input[1]'],
  ['null inside the array', { model: 'oai/embed', input: ['a', null] }, 'input[1]'],
  ['an empty string inside the array', { model: 'oai/embed', input: ['a', ''] }, 'input[1]'],
  ['an empty token array', { model: 'oai/embed', input: [[]] }, 'input[0]'],
  ['encoding_format other than float or base64', { model: 'oai/embed', input: 'x', encoding_format: 'int8' }, 'encoding_format'],
  ['dimensions not a positive integer', { model: 'oai/embed', input: 'x', dimensions: 0 }, 'dimensions'],
  ['user not a string', { model: 'oai/embed', input: 'x', user: 5 }, 'user'],
  ['token ids to a gemini model', { model: 'gem/embed', input: [1, 2, 3] }, 'input'],
  ['token arrays to a gemini model', { model: 'gem/embed', input: [[1], [2]] }, 'input'],
  ['101 inputs to a gemini model', { model: 'gem/embed', input: Array.from({ length: 101 }, (_, i) => `t${i}`) }, 'input'],
];

for (const [name, body, param] of BAD) {
  t.test(`400, nothing sent: ${name}`, async (t) => {
    await refused(t, await rig.post(body), 400, param, 'invalid_request');
  });
}

t.test('the four input forms and 2048 inputs pass', async (t) => {
  for (const input of ['x', ['a', 'b'], [1, 2, 3], [[1, 2], [3]], Array.from({ length: 2048 }, () => 'a')]) {
    const response = await rig.post({ model: 'oai/embed', input });
    t.equal(response.status, 200, JSON.stringify(input).slice(0, 40));
    await response.arrayBuffer();
  }
});

t.test('invalid JSON 400, a wrong content type 415, a body over MAX_BODY_BYTES 413: nothing sent', async (t) => {
  await refused(t, await rig.post('{"model":'), 400, null, 'invalid_json');
  await refused(t, await rig.post('{}', '/v1/embeddings', { 'content-type': 'text/plain' }), 415, null, 'unsupported_media_type');
  await refused(t, await rig.post({ model: 'oai/embed', input: 'x'.repeat(70 * 1024) }), 413, null, 'request_too_large');
});

t.test('off the roster: the 400 chat gives', async (t) => {
  const unknown = await refused(t, await rig.post({ model: 'oai/nope', input: 'x' }), 400, 'model', 'unknown_model');
  t.equal(unknown['code'], 'model_not_found');
  const bare = await refused(t, await rig.post({ model: 'text-embedding-3-small', input: 'x' }), 400, 'model', 'missing_provider_prefix');
  t.equal(bare['code'], 'model_not_found');
});

t.test('a chat model on /v1/embeddings: 400 naming its kind', async (t) => {
  const error = await refused(t, await rig.post({ model: 'oai/chat', input: 'x' }), 400, 'model', 'invalid_request');
  t.match(error['message'], /kind: chat/);
});

const HI = [{ role: 'user', content: 'hi' }];
t.test('an embedding model on the chat endpoints: 400 naming its kind, nothing sent', async (t) => {
  for (const [path, body] of [
    ['/v1/chat/completions', { model: 'oai/embed', messages: HI }],
    ['/v1/chat/completions', { model: 'gem/embed', messages: HI, stream: true }],
    ['/v1/responses', { model: 'oai/embed', input: 'hi' }],
    ['/v1/responses', { model: 'gem/embed', input: 'hi', stream: true }],
  ] as const) {
    const response = await rig.post(body, path);
    t.match(response.headers.get('content-type'), /^application\/json/, `${path}: a JSON error, not a stream`);
    const error = await refused(t, response, 400, 'model', 'invalid_request');
    t.match(error['message'], /kind: embedding/);
  }
  const messages = await rig.post({ model: 'oai/embed', max_tokens: 10, messages: HI }, '/v1/messages', { 'anthropic-version': '2023-06-01' });
  t.equal(messages.status, 400);
  const body = (await messages.json()) as { type: string; error: { type: string; message: string } };
  t.equal(body.type, 'error', "Anthropic's error shape");
  t.equal(body.error.type, 'invalid_request_error');
  t.match(body.error.message, /kind: embedding/);
  const count = await rig.post({ model: 'gem/embed', messages: HI }, '/v1/messages/count_tokens');
  t.equal(count.status, 400);
  t.match(((await count.json()) as { error: { message: string } }).error.message, /kind: embedding/);
});

t.test('GET /v1/embeddings: 405 with Allow: POST', async (t) => {
  const response = await fetch(`${rig.gateway.origin}/v1/embeddings`);
  t.equal(response.status, 405);
  t.equal(response.headers.get('allow'), 'POST');
  await response.arrayBuffer();
});

t.test('no model list: /v1/models, /v1/models/{id}, with anthropic-version, 404 saying why and where the strings are', async (t) => {
  for (const [path, headers] of [
    ['/v1/models', {}],
    ['/v1/models/oai%2Fembed', {}],
    ['/v1/models/gpt-4.1', {}],
    ['/v1/models', { 'anthropic-version': '2023-06-01', 'x-api-key': 'anything' }],
  ] as const) {
    const response = await fetch(`${rig.gateway.origin}${path}`, { headers });
    t.equal(response.status, 404, path);
    const error = await envelopeOf(response);
    t.equal(error['gateway_code'], 'not_found');
    t.match(error['message'], /no model list, by design/);
    t.match(error['message'], /routes\.yaml/);
    t.match(error['message'], /npm run --silent roster/);
  }
});
