// A reasoning model on the openai dialect (routes.yaml reasoning other than none: openai/o3 in the shipped file)
// reached by a client that does not know it by name, as LangChain does through a gateway: max_tokens goes as
// max_completion_tokens, temperature and top_p of 1 are dropped, other values are refused naming the field.
// The official openai client against the real engine, a node:http OpenAI mock recording what it received.
import { readFileSync } from 'node:fs';
import OpenAI, { BadRequestError } from 'openai';
import t, { type Test } from 'tap';
import { startGateway } from '../../helpers/gateway.js';
import { completionBody, sendJson, startMockUpstream, type MockUpstream } from '../../helpers/mock-upstream.js';
import { chunk, sseBody, startEventStream } from '../../helpers/sse-upstream.js';

const SHIPPED_ROUTES = readFileSync(new URL('../../../routes.yaml', import.meta.url), 'utf8');
const HI = [{ role: 'user' as const, content: 'hi' }];

async function rig(t: Test) {
  const upstream = await startMockUpstream((request, res) => {
    const body = JSON.parse(request.body) as { stream?: boolean; model: string };
    if (!body.stream) return sendJson(res, 200, completionBody(body.model));
    startEventStream(res);
    res.end(sseBody([chunk(body.model, { role: 'assistant', content: 'ok' }), chunk(body.model, {}, { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })]));
  });
  t.teardown(() => upstream.close());
  const gateway = await startGateway({ routes: SHIPPED_ROUTES, env: { GATEWAY_OPENAI_BASE_URL: `${upstream.origin}/v1`, OPENAI_API_KEY: 'sk-provider' } });
  t.teardown(() => gateway.close());
  return { upstream, gateway, client: new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 }) };
}

const sent = (upstream: MockUpstream) => JSON.parse(upstream.requests.at(-1)!.body) as Record<string, unknown>;

t.test('openai/o3 with LangChain-style max_tokens, temperature 1 and top_p 1: sent as max_completion_tokens, the defaults dropped', async (t) => {
  const { upstream, client } = await rig(t);
  const completion = await client.chat.completions.create({ model: 'openai/o3', messages: HI, max_tokens: 300, temperature: 1, top_p: 1 });
  t.equal(completion.choices[0]!.message.content, 'Hello there!');
  const body = sent(upstream);
  t.equal(body['model'], 'o3');
  t.equal(body['max_completion_tokens'], 300, 'max_tokens went as max_completion_tokens');
  for (const field of ['max_tokens', 'temperature', 'top_p']) t.notOk(field in body, `${field} not sent`);
});

t.test('streamed, with a null temperature and both token fields equal: one max_completion_tokens, usage still asked for', async (t) => {
  const { upstream, client } = await rig(t);
  const stream = await client.chat.completions.create({ model: 'openai/o3', messages: HI, max_tokens: 50, max_completion_tokens: 50, temperature: null, stream: true });
  let text = '';
  for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
  t.equal(text, 'ok');
  const body = sent(upstream);
  t.equal(body['max_completion_tokens'], 50);
  t.notOk('max_tokens' in body);
  t.notOk('temperature' in body);
  t.same(body['stream_options'], { include_usage: true });
});

for (const [field, value] of [['temperature', 0.7], ['temperature', 0], ['top_p', 0.5]] as const) {
  t.test(`openai/o3 with ${field} ${value}: a 400 naming ${field}, nothing sent`, async (t) => {
    const { upstream, client } = await rig(t);
    const error = await client.chat.completions.create({ model: 'openai/o3', messages: HI, [field]: value }).catch((caught: unknown) => caught);
    t.ok(error instanceof BadRequestError, 'a typed 400');
    t.match((error as BadRequestError).error, {
      param: field,
      code: 'unsupported_parameter',
      origin: 'gateway',
      message: new RegExp(`^'${field}' ${value} is not supported for this model: a reasoning model takes only the default \\(1\\); leave it out or send 1\\.`),
    });
    t.equal(upstream.requests.length, 0);
  });
}

t.test('max_tokens and max_completion_tokens set to different values: a 400 naming max_tokens', async (t) => {
  const { upstream, client } = await rig(t);
  const error = await client.chat.completions.create({ model: 'openai/o3', messages: HI, max_tokens: 10, max_completion_tokens: 20 }).catch((caught: unknown) => caught);
  t.ok(error instanceof BadRequestError);
  t.match((error as BadRequestError).error, { param: 'max_tokens', message: /both set, to different values/ });
  t.equal(upstream.requests.length, 0);
});

t.test('a model with reasoning none keeps max_tokens and temperature as sent, byte for byte', async (t) => {
  const { upstream, gateway } = await rig(t);
  const body = (model: string) => `{"model":"${model}","messages":[{"role":"user","content":"hi"}],"max_tokens":300,"temperature":0.70}`;
  const response = await gateway.post(body('openai/gpt-4.1'));
  t.equal(response.status, 200);
  t.equal(upstream.requests.at(-1)!.body, body('gpt-4.1'));
});

t.test('the other inbound formats reach it too: /v1/messages temperature 1 is dropped, 0.2 refused naming temperature', async (t) => {
  const { upstream, gateway } = await rig(t);
  const post = (temperature: number) =>
    fetch(`${gateway.origin}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'openai/o3', max_tokens: 64, temperature, messages: HI }) });
  t.equal((await post(1)).status, 200);
  const body = sent(upstream);
  t.equal(body['max_completion_tokens'], 64);
  t.notOk('temperature' in body);
  const refused = await post(0.2);
  t.equal(refused.status, 400);
  t.match(await refused.json(), { type: 'error', error: { type: 'invalid_request_error', param: 'temperature' } });
  t.equal(upstream.requests.length, 1);
});
