import t from 'tap';
import { envelopeOf, startGateway } from '../helpers/gateway.js';

t.test('GET /health reports status, version and the roster it serves', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const response = await fetch(`${gateway.origin}/health`);
  t.equal(response.status, 200);
  const body = (await response.json()) as Record<string, unknown>;
  t.match(body, { status: 'ok', version: '0.0.0-test', models: 7, routes_sha256: /^[0-9a-f]{64}$/ });
});

t.test('there is no model list, and unknown paths are JSON 404s, never HTML', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  for (const [method, path] of [
    ['GET', '/v1/models'],
    ['GET', '/'],
    ['POST', '/v1/completions'],
    ['POST', '/v1/chat/completions/extra'],
    ['GET', '/v1/%E0%A4%A'],
  ] as const) {
    const response = await fetch(`${gateway.origin}${path}`, { method });
    t.equal(response.status, 404, `${method} ${path}`);
    t.match(response.headers.get('content-type'), /^application\/json/);
    t.equal(response.headers.get('x-should-retry'), 'false');
    t.match(await envelopeOf(response), { gateway_code: 'not_found', type: 'invalid_request_error', origin: 'gateway' });
  }
});

t.test('a wrong method on a known path is 405 with Allow', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  for (const [method, path, allow] of [
    ['GET', '/v1/chat/completions', 'POST'],
    ['PUT', '/v1/chat/completions', 'POST'],
    ['DELETE', '/v1/chat/completions', 'POST'],
    ['POST', '/health', 'GET, HEAD'],
  ] as const) {
    const response = await fetch(`${gateway.origin}${path}`, { method });
    t.equal(response.status, 405, `${method} ${path}`);
    t.equal(response.headers.get('allow'), allow);
    t.match(await envelopeOf(response), { gateway_code: 'method_not_allowed' });
  }
});

t.test('every response carries an x-request-id; an unsafe caller id is replaced', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const own = await fetch(`${gateway.origin}/health`);
  t.match(own.headers.get('x-request-id'), /^req_[0-9a-f]{32}$/);
  const kept = await fetch(`${gateway.origin}/nope`, { headers: { 'x-request-id': 'trace-123' } });
  t.equal(kept.headers.get('x-request-id'), 'trace-123');
  const replaced = await fetch(`${gateway.origin}/health`, { headers: { 'x-request-id': `evil value ${'x'.repeat(300)}` } });
  t.match(replaced.headers.get('x-request-id'), /^req_[0-9a-f]{32}$/);
  // Ids are drawn 128 at a time: 300 cross two draws, and each is a version 4 UUID's hex digits.
  const ids = new Set<string>();
  for (let i = 0; i < 300; i++) {
    const response = await fetch(`${gateway.origin}/health`);
    await response.text();
    ids.add(response.headers.get('x-request-id') ?? '');
  }
  t.equal(ids.size, 300, 'no id repeats');
  t.ok([...ids].every((id) => /^req_[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/.test(id)), 'each is a random UUID without its dashes');
});

t.test('while draining, /health answers 503 draining and responses close their connection', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  t.same(await gateway.drain(0), { forcedStops: 0 });
  const response = await fetch(`${gateway.origin}/health`);
  t.equal(response.status, 503);
  t.match(await response.json(), { status: 'draining', version: '0.0.0-test' });
  t.equal(response.headers.get('connection'), 'close');
});
