import t from 'tap';
import { envelopeOf, startGateway } from '../helpers/gateway.js';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';

t.test('reasoning_effort: a level or a positive integer; anything else is a 400 naming it, before any provider is called', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('x')));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  for (const effort of ['extreme', 'HIGH', '', 0, -1, 1.5, true, {}, [], '1024']) {
    const response = await gateway.post({ model: 'mock/gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: effort });
    t.equal(response.status, 400, `${JSON.stringify(effort)}: 400`);
    const error = await envelopeOf(response);
    t.match(error, { gateway_code: 'invalid_request', type: 'invalid_request_error', param: 'reasoning_effort' }, JSON.stringify(effort));
    t.match(error['message'], /reasoning_effort/);
  }
  const response = await gateway.post({ model: 'mock/gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'extreme' });
  t.equal(
    (await envelopeOf(response))['message'],
    `Invalid value for 'reasoning_effort': expected "none", "minimal", "low", "medium", "high", "xhigh", "max", or an integer, or null.`,
    'the message lists what to send',
  );
  t.equal(upstream.requests.length, 0);
});

t.test('an openai-dialect provider gets reasoning_effort unchanged, byte for byte', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('x')));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const efforts = ['"none"', '"minimal"', '"low"', '"medium"', '"high"', '"xhigh"', '"max"', '1', '2048', '2048.0', '100000000000000000000', 'null'];
  for (const effort of efforts) {
    const text = `{"model":"mock/gpt-4.1-mini","messages":[{"role":"user","content":"hi"}],"reasoning_effort" : ${effort}}`;
    const response = await gateway.post(text);
    t.equal(response.status, 200, effort);
    await response.text();
    t.equal(upstream.requests.at(-1)?.body, text.replace('mock/gpt-4.1-mini', 'gpt-4.1-mini'), `${effort} reaches the provider as sent`);
  }
});
