import OpenAI from 'openai';
import t, { type Test } from 'tap';
import { startGateway } from '../../helpers/gateway.js';
import { GEMINI_ROUTES, geminiGateway, response, USAGE, type GeminiAnswer } from '../../helpers/mock-gemini.js';
import { completionBody, sendJson, startMockUpstream } from '../../helpers/mock-upstream.js';
import { sseBody, chunk, startEventStream } from '../../helpers/sse-upstream.js';

// Failover between a gemini route and an openai-dialect fallback, both ways: each dialect builds its own
// request for the same caller body, and the caller sees one answer in OpenAI's shape.

async function pair(t: Test, gemini: (n: number) => GeminiAnswer, openaiStatus: (n: number) => number) {
  const openai = await startMockUpstream((request, res) => {
    const status = openaiStatus(openai.requests.length - 1);
    if (status !== 200) return sendJson(res, status, { error: { message: 'down', type: 'server_error' } });
    if ((JSON.parse(request.body) as { stream?: boolean }).stream) {
      startEventStream(res);
      res.end(sseBody([chunk('gpt-4.1', { role: 'assistant', content: 'from openai' }), chunk('gpt-4.1', {}, { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })]));
      return;
    }
    sendJson(res, 200, completionBody('gpt-4.1', 'from openai'));
  });
  t.teardown(() => openai.close());
  const { client, mock, gateway } = await geminiGateway(t, (_call, n) => gemini(n), { upstreamOrigin: openai.origin });
  return { client, gemini: mock, openai, gateway };
}

const raw = (client: OpenAI, model: string, stream = false) =>
  client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], stream } as never).withResponse();

t.test('a gemini route that answers 503 UNAVAILABLE fails over to its openai fallback', async (t) => {
  const { client, gemini, openai } = await pair(t, () => ({ status: 503, json: { error: { code: 503, message: 'overloaded', status: 'UNAVAILABLE' } } }), () => 200);
  const { data, response: reply } = await raw(client, 'gem/flash');
  t.equal((data as OpenAI.ChatCompletion).choices[0]!.message.content, 'from openai');
  t.equal((data as OpenAI.ChatCompletion).model, 'gem/flash');
  t.equal(reply.headers.get('x-gateway-served-by'), 'backup/gpt-4.1#0');
  t.equal(gemini.calls.length, 1);
  t.equal((JSON.parse(openai.requests[0]!.body) as { model: string }).model, 'gpt-4.1');
});

t.test('a streamed request on a gemini route that answers 429 fails over before anything was sent', async (t) => {
  const { client } = await pair(t, () => ({ status: 429, json: [{ error: { code: 429, message: 'quota', status: 'RESOURCE_EXHAUSTED' } }] }), () => 200);
  const stream = client.chat.completions.stream({ model: 'gem/flash', messages: [{ role: 'user', content: 'hi' }], stream: true });
  t.equal((await stream.finalChatCompletion()).choices[0]!.message.content, 'from openai');
});

t.test('and back: an openai route whose provider fails is served by its gemini fallback, streamed and not', async (t) => {
  const { client, gemini } = await pair(t, (n) => (n === 0 ? { json: response([{ text: 'from gemini' }], 'STOP', USAGE) } : { records: [response([{ text: 'from gemini' }], 'STOP', USAGE)] }), () => 500);
  const { data, response: reply } = await raw(client, 'backup/gpt-4.1');
  t.equal((data as OpenAI.ChatCompletion).choices[0]!.message.content, 'from gemini');
  t.equal(reply.headers.get('x-gateway-served-by'), 'gem/flash#0');
  const stream = client.chat.completions.stream({ model: 'backup/gpt-4.1', messages: [{ role: 'user', content: 'hi' }], stream: true });
  t.equal((await stream.finalChatCompletion()).choices[0]!.message.content, 'from gemini');
  t.same(gemini.calls.map((call) => [call.model, call.stream]), [['gemini-2.5-flash', false], ['gemini-2.5-flash', true]]);
});

t.test('a Vertex route with no token (its key file is missing) fails over without calling Vertex', async (t) => {
  const openai = await startMockUpstream((_request, res) => sendJson(res, 200, completionBody('gpt-4.1', 'from openai')));
  const vertex = await startMockUpstream((_request, res) => sendJson(res, 500, {}));
  const routes = GEMINI_ROUTES.replace('providers:\n', `providers:\n  vertex:\n    dialect: gemini\n    base_url: ${vertex.origin}/v1/projects/p/locations/global/publishers/google\n    auth: google\n`).replace(
    /\nerrors:/,
    '\n  vertex/gemini-2.5-flash: { max_output_tokens: 65536, fallback: [backup/gpt-4.1] }\nerrors:',
  );
  const gateway = await startGateway({ routes, upstreamOrigin: openai.origin, env: { GOOGLE_APPLICATION_CREDENTIALS: '/nonexistent/key.json' } });
  t.teardown(() => Promise.all([gateway.close(), openai.close(), vertex.close()]));
  const client = new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 });
  const { data, response: reply } = await raw(client, 'vertex/gemini-2.5-flash');
  t.equal((data as OpenAI.ChatCompletion).choices[0]!.message.content, 'from openai');
  t.equal(reply.headers.get('x-gateway-served-by'), 'backup/gpt-4.1#0');
  t.equal(vertex.requests.length, 0);
});
