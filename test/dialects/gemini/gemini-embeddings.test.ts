// The gemini dialect's embeddings: one batchEmbedContents call per request (at most 100 inputs), the key as
// x-goog-api-key only; the answer as OpenAI's list with Google's values untouched, or base64 of little-endian
// float32; a wrong count or shape is a 502; Google's errors go through the error rules as for chat.
import t from 'tap';
import { sendJson } from '../../helpers/mock-upstream.js';
import { envelopeOf } from '../../helpers/gateway.js';
import { GEM_KEY, startEmbeddingsRig } from '../../helpers/embeddings-rig.js';

const rig = await startEmbeddingsRig();
t.teardown(() => rig.close());

t.test('batchEmbedContents: one request per input in order, dimensions as outputDimensionality, user dropped, the key once', async (t) => {
  const response = await rig.post({ model: 'gem/embed', input: ['first', 'second'], dimensions: 768, user: 'u-1', encoding_format: 'float' }, '/v1/embeddings', { authorization: 'Bearer caller-secret' });
  t.equal(response.status, 200);
  await response.arrayBuffer();
  const request = rig.mock.requests.at(-1)!;
  t.equal(request.url, '/gem/v1beta/models/gemini-embedding-001:batchEmbedContents', 'no key in the URL');
  t.equal(request.headers['x-goog-api-key'], GEM_KEY);
  t.equal(request.headers['authorization'], undefined);
  t.strictSame(JSON.parse(request.body), {
    requests: [
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'first' }] }, outputDimensionality: 768 },
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'second' }] }, outputDimensionality: 768 },
    ],
  });
  await rig.post({ model: 'gem/embed', input: 'only' }).then((answer) => answer.arrayBuffer());
  t.strictSame(JSON.parse(rig.mock.requests.at(-1)!.body), { requests: [{ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'only' }] } }] }, 'no outputDimensionality unless asked');
});

t.test('100 inputs: one call of 100; 101 are refused before any call (see embeddings-refusals)', async (t) => {
  const before = rig.mock.requests.length;
  const response = await rig.post({ model: 'gem/embed', input: Array.from({ length: 100 }, (_, i) => `t${i}`) });
  t.equal(response.status, 200);
  const answer = (await response.json()) as { data: { index: number }[] };
  t.strictSame(answer.data.map((item) => item.index), Array.from({ length: 100 }, (_, i) => i));
  t.equal(rig.mock.requests.length, before + 1);
  t.equal((JSON.parse(rig.mock.requests.at(-1)!.body) as { requests: unknown[] }).requests.length, 100);
});

t.test("Google's values as they came with float; base64 of little-endian float32 with base64", async (t) => {
  // 0.1 as float32 is 3d cc cc cd big-endian: its bytes read the other way round are another number entirely.
  const values = [0.1, -2.5, 1e-7, 0.123456789012345];
  rig.answerWith((_request, res) => (sendJson(res, 200, `{"embeddings":[{"values":[${values.join(',')}]}]}`), true));
  t.teardown(() => rig.answerWith(undefined));
  const float = (await (await rig.post({ model: 'gem/embed', input: 'x' })).json()) as Record<string, unknown>;
  t.strictSame(float, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: values }], model: 'gem/embed', usage: { prompt_tokens: 0, total_tokens: 0 } });
  const encoded = (await (await rig.post({ model: 'gem/embed', input: 'x', encoding_format: 'base64' })).json()) as { data: { embedding: string }[] };
  const bytes = Buffer.from(encoded.data[0]!.embedding, 'base64');
  t.equal(bytes.length, 16, '4 bytes per value');
  t.strictSame([0, 1, 2, 3].map((i) => bytes.readFloatLE(i * 4)), values.map(Math.fround), 'little-endian float32');
  t.not(bytes.readFloatBE(0), Math.fround(0.1), 'read big-endian it is another number: the byte order matters');
  t.equal(bytes.subarray(0, 4).toString('hex'), 'cdcccc3d');
});

t.test("Google's usage counts when it sends some", async (t) => {
  rig.answerWith((_request, res) => (sendJson(res, 200, { embeddings: [{ values: [1] }], usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } }), true));
  t.teardown(() => rig.answerWith(undefined));
  const answer = (await (await rig.post({ model: 'gem/embed', input: 'x' })).json()) as { usage: unknown };
  t.strictSame(answer.usage, { prompt_tokens: 5, total_tokens: 5 });
});

t.test('a count of embeddings other than the inputs, or another shape: 502 invalid_upstream_response', async (t) => {
  for (const body of ['{"embeddings":[{"values":[1]}]}', '{"embeddings":[{"values":[1]},{"values":"x"}]}', '{"embedding":{"values":[1]}}', '[]']) {
    rig.answerWith((_request, res) => (sendJson(res, 200, body), true));
    const response = await rig.post({ model: 'gem/embed', input: ['a', 'b'] });
    t.equal(response.status, 502, body);
    t.equal((await envelopeOf(response))['gateway_code'], 'invalid_upstream_response');
  }
  rig.answerWith(undefined);
});

t.test("Google's errors: provider_code its status word, the message verbatim, also wrapped in an array", async (t) => {
  for (const wrap of [(error: unknown) => error, (error: unknown) => [error]]) {
    rig.answerWith((_request, res) => (sendJson(res, 400, wrap({ error: { code: 400, message: '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch', status: 'INVALID_ARGUMENT' } })), true));
    const response = await rig.post({ model: 'gem/embed', input: 'x' });
    t.equal(response.status, 400);
    const error = await envelopeOf(response);
    t.equal(error['provider_code'], 'INVALID_ARGUMENT');
    t.equal(error['provider_status'], 400);
    t.equal(error['provider'], 'gem');
    t.match(error['message'], 'at most 100 requests can be in one batch');
  }
  rig.answerWith((_request, res) => (sendJson(res, 429, { error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED' } }), true));
  t.teardown(() => rig.answerWith(undefined));
  const limited = await rig.post({ model: 'gem/embed', input: 'x' });
  t.equal(limited.status, 429);
  t.equal(limited.headers.get('x-should-retry'), 'true');
  t.equal((await envelopeOf(limited))['provider_code'], 'RESOURCE_EXHAUSTED');
});
