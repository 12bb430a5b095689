// The openai dialect's embeddings: the caller's body reaches {base_url}/embeddings byte for byte but `model`
// (rewritten in place), with the provider's key; the answer comes back as sent but its `model`; a 2xx that is not
// an embeddings list is a 502; a provider error goes through the error rules as for chat.
import t from 'tap';
import { sendJson } from '../../helpers/mock-upstream.js';
import { envelopeOf } from '../../helpers/gateway.js';
import { OAI_KEY, startEmbeddingsRig } from '../../helpers/embeddings-rig.js';

const rig = await startEmbeddingsRig();
t.teardown(() => rig.close());

t.test('the body byte for byte but model, rewritten in place; the provider key as a bearer', async (t) => {
  const sent = '{ "input" : ["a\\u00e9", "b"],\n  "model":"oai/embed" , "encoding_format":"base64","dimensions":2.0e2, "user":"u-1", "x_extra":{"k":[1e3, -0.0]}, "model" :"oai/embed"}';
  const response = await rig.post(sent, '/v1/embeddings', { authorization: 'Bearer caller-secret' });
  t.equal(response.status, 200);
  await response.arrayBuffer();
  const request = rig.mock.requests.at(-1)!;
  t.equal(request.method, 'POST');
  t.equal(request.url, '/oai/v1/embeddings');
  t.equal(request.body, sent.replaceAll('"model":"oai/embed"', '"model":"text-embedding-3-small"').replace('"model" :"oai/embed"', '"model" :"text-embedding-3-small"'));
  t.equal(request.headers['authorization'], `Bearer ${OAI_KEY}`, "the provider's key, never the caller's");
});

t.test("the answer as the provider sent it but its model, set to the routing string", async (t) => {
  const answer = '{"object":"list","data":[{"object":"embedding","index":0,"embedding":"AAAAPw=="}],"model":"text-embedding-3-small-v9","usage":{"prompt_tokens":3,"total_tokens":3},"x_unknown":[1.50,true]}';
  rig.answerWith((_request, res) => (sendJson(res, 200, answer), true));
  t.teardown(() => rig.answerWith(undefined));
  const response = await rig.post({ model: 'oai/embed', input: 'x' });
  t.equal(response.status, 200);
  t.equal(await response.text(), answer.replace('"text-embedding-3-small-v9"', '"oai/embed"'));
});

t.test('a 2xx that is not an object with a data array: 502 invalid_upstream_response', async (t) => {
  for (const body of ['[1]', '{"data":{}}', '{"object":"list"}', 'not json']) {
    rig.answerWith((_request, res) => (sendJson(res, 200, body), true));
    const response = await rig.post({ model: 'oai/embed', input: 'x' });
    t.equal(response.status, 502, body);
    t.equal((await envelopeOf(response))['gateway_code'], 'invalid_upstream_response');
  }
  rig.answerWith(undefined);
});

t.test("a provider error: the error rules, the provider's message and code", async (t) => {
  rig.answerWith((_request, res) => (sendJson(res, 400, { error: { message: "This model's maximum context length is 8192 tokens", type: 'invalid_request_error', code: 'context_length_exceeded' } }), true));
  t.teardown(() => rig.answerWith(undefined));
  const response = await rig.post({ model: 'oai/embed', input: 'x' });
  t.equal(response.status, 400);
  const error = await envelopeOf(response);
  t.equal(error['gateway_code'], 'provider_rejected_request');
  t.equal(error['provider'], 'oai');
  t.equal(error['provider_status'], 400);
  t.equal(error['provider_code'], 'context_length_exceeded');
  t.match(error['message'], /maximum context length/);
});
