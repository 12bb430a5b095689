// The official openai client's embeddings.create(), unmodified, against an openai-dialect and a gemini-dialect
// embedding model: its default (it asks for base64 and decodes little-endian float32 itself) and encoding_format float.
import OpenAI from 'openai';
import t from 'tap';
import { startEmbeddingsRig, vectorFor } from '../helpers/embeddings-rig.js';

const rig = await startEmbeddingsRig();
t.teardown(() => rig.close());
const client = new OpenAI({ baseURL: `${rig.gateway.origin}/v1`, apiKey: 'unused', maxRetries: 0 });

for (const model of ['oai/embed', 'gem/embed']) {
  t.test(`${model}: the client's default (base64) decodes to the mock's floats`, async (t) => {
    const before = rig.mock.requests.length;
    const answer = await client.embeddings.create({ model, input: ['alpha', 'beta', 'gamma'] });
    t.equal(answer.model, model, 'model is the routing string');
    t.equal(answer.object, 'list');
    t.strictSame(
      answer.data.map((item) => [item.index, item.embedding]),
      [0, 1, 2].map((i) => [i, vectorFor(i)]),
    );
    t.ok(Number.isInteger(answer.usage.prompt_tokens) && answer.usage.prompt_tokens >= 0);
    const sent = rig.mock.requests.slice(before);
    t.equal(sent.length, 1, 'one upstream call');
    if (model === 'oai/embed') t.equal(JSON.parse(sent[0]!.body).encoding_format, 'base64', 'the client asked for base64, and it went on as asked');
  });

  t.test(`${model}: encoding_format float gives the floats as numbers`, async (t) => {
    const answer = await client.embeddings.create({ model, input: 'one text', encoding_format: 'float' });
    t.strictSame(answer.data[0]?.embedding, vectorFor(0));
    t.equal(answer.data.length, 1);
  });
}
