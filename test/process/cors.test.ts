import t from 'tap';
import { envelopeOf, startGateway } from '../helpers/gateway.js';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';
import { startServerProcess } from './server-process.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';

const app = 'https://app.example.com';
const chat = '/v1/chat/completions';
const ask = JSON.stringify({ model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'Hello' }] });

/** A browser's preflight before a POST with the caller key and a JSON body. */
function preflight(origin: string, requestHeaders = 'authorization,content-type', method = 'POST'): RequestInit {
  return { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': requestHeaders } };
}

function corsHeadersOf(response: Response): Record<string, string> {
  return Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-')));
}

t.test('off by default: no preflight answer and no CORS header, whatever the origin', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const pre = await fetch(`${gateway.origin}${chat}`, preflight(app));
  t.equal(pre.status, 405);
  t.strictSame(corsHeadersOf(pre), {});
  const post = await gateway.post(ask, { origin: app });
  t.strictSame(corsHeadersOf(post), {});
});

t.test('an allowed origin: the preflight is answered without a caller key, and allows the key and content-type', async (t) => {
  const gateway = await startGateway({ corsOrigins: [app, 'http://localhost:5173'], callerKeys: ['caller-key-1'] });
  t.teardown(() => gateway.close());
  const pre = await fetch(`${gateway.origin}${chat}`, preflight(app));
  t.equal(pre.status, 204);
  t.equal(await pre.text(), '');
  t.equal(pre.headers.get('access-control-allow-origin'), app);
  t.equal(pre.headers.get('access-control-allow-methods'), 'POST');
  const allowed = pre.headers.get('access-control-allow-headers')!.split(', ');
  t.ok(allowed.includes('authorization') && allowed.includes('content-type') && allowed.includes('x-request-id'), allowed.join());
  t.equal(pre.headers.get('access-control-max-age'), '7200');
  t.equal(pre.headers.get('access-control-allow-credentials'), null, 'no cookies: the key travels in Authorization');
  t.match(pre.headers.get('vary'), /Origin/);

  const other = await fetch(`${gateway.origin}${chat}`, preflight('http://localhost:5173'));
  t.equal(other.headers.get('access-control-allow-origin'), 'http://localhost:5173');
});

t.test('the headers an SDK adds (x-stainless-*) are allowed too; malformed names are not echoed', async (t) => {
  const gateway = await startGateway({ corsOrigins: [app] });
  t.teardown(() => gateway.close());
  const pre = await fetch(`${gateway.origin}${chat}`, preflight(app, 'Authorization, Content-Type, X-Stainless-OS, x-stainless-retry-count'));
  t.equal(pre.status, 204);
  t.strictSame(pre.headers.get('access-control-allow-headers')!.split(', ').sort(), [
    'authorization', 'content-type', 'x-request-id', 'x-stainless-os', 'x-stainless-retry-count',
  ]);
  const bad = await fetch(`${gateway.origin}${chat}`, preflight(app, 'content-type, bad header, x-ok'));
  t.strictSame(bad.headers.get('access-control-allow-headers')!.split(', ').sort(), ['authorization', 'content-type', 'x-request-id']);
});

t.test('a disallowed origin gets no CORS header at all, on the preflight or the request', async (t) => {
  const gateway = await startGateway({ corsOrigins: [app] });
  t.teardown(() => gateway.close());
  for (const origin of ['https://evil.example.com', 'https://app.example.com.evil.com', 'null', 'https://APP.example.com']) {
    const pre = await fetch(`${gateway.origin}${chat}`, preflight(origin));
    t.not(pre.status, 204, origin);
    t.strictSame(corsHeadersOf(pre), {}, origin);
    const post = await gateway.post(ask, { origin });
    t.strictSame(corsHeadersOf(post), {}, origin);
  }
  const wrongMethod = await fetch(`${gateway.origin}${chat}`, preflight(app, 'content-type', 'PUT'));
  t.equal(wrongMethod.status, 405, 'only POST is offered');
  t.equal(wrongMethod.headers.get('access-control-allow-methods'), null);
});

t.test('answers to an allowed origin carry CORS headers, errors included, and expose the retry headers', async (t) => {
  const upstream = await startMockUpstream((req, res) => {
    if (req.body.includes('rate-limit-me')) sendJson(res, 429, { error: { message: 'slow down', code: 'rate_limit_exceeded' } }, { 'retry-after': '7' });
    else sendJson(res, 200, completionBody('gpt-4o-2024-11-20'));
  });
  const gateway = await startGateway({ upstreamOrigin: upstream.origin, corsOrigins: [app], callerKeys: ['caller-key-1'] });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const key = { origin: app, authorization: 'Bearer caller-key-1' };
  const answers = {
    success: await gateway.post(ask, key),
    unauthorized: await gateway.post(ask, { origin: app }),
    unknownModel: await gateway.post({ model: 'mock/nope', messages: [{ role: 'user', content: 'x' }] }, key),
    providerError: await gateway.post({ model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'rate-limit-me' }] }, key),
    notFound: await fetch(`${gateway.origin}/v1/models`, { headers: key }),
  };
  t.equal(answers.success.status, 200);
  t.equal(answers.unauthorized.status, 401);
  t.equal(answers.unknownModel.status, 400);
  t.equal(answers.providerError.status, 429);
  t.equal(answers.notFound.status, 404);
  for (const [name, response] of Object.entries(answers)) {
    t.equal(response.headers.get('access-control-allow-origin'), app, name);
    t.strictSame(response.headers.get('access-control-expose-headers')!.split(', ').sort(), [
      'deprecation', 'retry-after', 'retry-after-ms', 'sunset', 'x-gateway-replacement', 'x-gateway-served-by',
      'x-ratelimit-limit-requests', 'x-ratelimit-limit-tokens', 'x-ratelimit-remaining-requests', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-requests', 'x-ratelimit-reset-tokens',
      'x-request-id', 'x-should-retry',
    ], name);
    t.match(response.headers.get('vary'), /Origin/, name);
  }
  t.match(await envelopeOf(answers.unauthorized), { gateway_code: 'unauthorized' });
  t.equal(answers.providerError.headers.get('retry-after'), '7');
});

t.test('a stream to an allowed origin carries the CORS headers', async (t) => {
  const upstream = await startMockUpstream((_req, res) => {
    startEventStream(res);
    res.end(sseBody([chunk('gpt-4o-2024-11-20', { content: 'Hi' })]));
  });
  const gateway = await startGateway({ upstreamOrigin: upstream.origin, corsOrigins: [app] });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const response = await gateway.post({ model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'x' }], stream: true }, { origin: app });
  t.equal(response.status, 200);
  t.equal(response.headers.get('access-control-allow-origin'), app);
  t.match(await response.text(), /data: \[DONE\]/);
});

t.test('CORS_ORIGINS=* allows any origin, without reflecting it', async (t) => {
  const gateway = await startGateway({ corsOrigins: '*' });
  t.teardown(() => gateway.close());
  const pre = await fetch(`${gateway.origin}${chat}`, preflight('https://anywhere.example'));
  t.equal(pre.status, 204);
  t.equal(pre.headers.get('access-control-allow-origin'), '*');
  const post = await gateway.post(ask, { origin: 'https://anywhere.example' });
  t.equal(post.headers.get('access-control-allow-origin'), '*');
  const noOrigin = await gateway.post(ask);
  t.strictSame(corsHeadersOf(noOrigin), {}, 'a caller that is not a browser gets no CORS header');
});

t.test('the server process reads CORS_ORIGINS', async (t) => {
  const server = await startServerProcess({ CORS_ORIGINS: app, GATEWAY_API_KEYS: 'caller-key-1' });
  t.teardown(() => server.child.kill('SIGKILL'));
  const pre = await fetch(`${server.origin}${chat}`, preflight(app));
  t.equal(pre.status, 204);
  t.equal(pre.headers.get('access-control-allow-origin'), app);
});
