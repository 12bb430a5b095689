import { connect } from 'node:net';
import t from 'tap';
import { MAX_LOG_LINE_BYTES, MAX_LOGGED_ERROR_CHARS, boundedText, describeError } from '../../src/observe/log-fields.js';
import { startGateway } from '../helpers/gateway.js';
import { parseExposition, valueOf } from '../helpers/prometheus.js';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';

const hi = [{ role: 'user', content: 'hi' }];

/** Sends raw bytes (a request fetch would refuse to send) and reads the answer until the gateway closes. */
function rawRequest(origin: string, bytes: Buffer): Promise<string> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

/** The request lines are written when each response closes, a moment after the caller has read it. */
async function waitForRequestLines(gateway: { requestLogs(): unknown[] }, count: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (gateway.requestLogs().length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
}

t.test('a model string off the roster that is not a plain routing string is logged only as a short keyed fingerprint, however long', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('gpt-4o')));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin, maxBodyBytes: 9 * 1024 * 1024 });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  const huge = `mock/${'x'.repeat(8 * 1024 * 1024)}`;
  const patient = 'mock/patient John Doe, born 1970-01-01, diagnosis F32.1';
  const cases = [
    { id: 'huge', model: huge, status: 400 },
    { id: 'same-1', model: patient, status: 400 },
    { id: 'same-2', model: patient, status: 400 },
    { id: 'no-prefix', model: 'John Doe 555-0100', status: 400 },
    { id: 'listed', model: 'mock/gpt-4o', status: 200 },
  ];
  for (const c of cases) {
    const response = await gateway.post({ model: c.model, messages: hi }, { 'x-request-id': c.id });
    t.equal(response.status, c.status, c.id);
    await response.text();
  }
  await waitForRequestLines(gateway, cases.length);

  const byId = new Map(gateway.requestLogs().map((line) => [line['request_id'], line]));
  t.match(byId.get('listed'), { model: 'mock/gpt-4o', model_fingerprint: null }, 'a roster string is logged as is');
  t.match(byId.get('huge'), { model: null, gateway_code: 'unknown_model', model_fingerprint: new RegExp(`^len=${huge.length} hmac=[0-9a-f]{12}$`) });
  t.match(byId.get('no-prefix'), { model: null, gateway_code: 'missing_provider_prefix', model_fingerprint: /^len=17 hmac=[0-9a-f]{12}$/ });
  t.equal(byId.get('same-1')!['model_fingerprint'], byId.get('same-2')!['model_fingerprint'], 'the same string has the same fingerprint, so repeats show');
  t.not(byId.get('same-1')!['model_fingerprint'], byId.get('no-prefix')!['model_fingerprint']);
  const log = gateway.logLines.join('');
  for (const secret of ['patient', 'John Doe', '555-0100', 'xxxxxxxx']) t.notOk(log.includes(secret), `the log never holds "${secret}"`);
  for (const line of gateway.logLines) t.ok(Buffer.byteLength(line) <= MAX_LOG_LINE_BYTES, `a line of ${Buffer.byteLength(line)} bytes`);
});

t.test('an off-roster model that looks like a routing string is logged in clear and counted by its provider prefix', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const cases = [
    { id: 'removed', model: 'mock/gpt-3.5-turbo-0301' },
    { id: 'removed-again', model: 'mock/gpt-3.5-turbo-0301' },
    { id: 'other-prefix', model: 'acme/llama3.2:3b' },
    { id: 'no-prefix', model: 'gpt-4o' },
    { id: 'too-long', model: `mock/${'a'.repeat(124)}` },
    { id: 'sentence', model: 'mock/patient Jane Roe' },
  ];
  for (const c of cases) {
    const response = await gateway.post({ model: c.model, messages: hi }, { 'x-request-id': c.id });
    t.equal(response.status, 400, c.id);
    await response.text();
  }
  await waitForRequestLines(gateway, cases.length);
  const byId = new Map(gateway.requestLogs().map((line) => [line['request_id'], line]));
  t.match(byId.get('removed'), { model: 'mock/gpt-3.5-turbo-0301', model_fingerprint: null, gateway_code: 'unknown_model', provider: null });
  t.match(byId.get('other-prefix'), { model: 'acme/llama3.2:3b', model_fingerprint: null });
  t.match(byId.get('no-prefix'), { model: 'gpt-4o', model_fingerprint: null, gateway_code: 'missing_provider_prefix' });
  t.match(byId.get('too-long'), { model: null, model_fingerprint: /^len=129 hmac=/ }, 'over 128 characters: hashed');
  t.match(byId.get('sentence'), { model: null, model_fingerprint: /^len=21 hmac=/ }, 'a space: hashed');
  t.notOk(gateway.logLines.join('').includes('Jane Roe'));

  const samples = parseExposition(await (await fetch(`${gateway.origin}/metrics`)).text());
  t.equal(valueOf(samples, 'gateway_off_roster_requests_total', { prefix: 'mock' }), 4, 'a configured provider names its own series');
  t.equal(valueOf(samples, 'gateway_off_roster_requests_total', { prefix: 'other' }), 2, 'any other prefix, or none, is other');
  t.equal(samples.filter((sample) => sample.name === 'gateway_off_roster_requests_total').length, 2, 'no series for a caller-chosen prefix');
});

t.test('hostile paths, methods and headers leave every log line within MAX_LOG_LINE_BYTES', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('gpt-4o')));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  const longRequestId = 'r'.repeat(12_000);
  const unicodeId = 'ünïcødé-\u2028-"quoted"-\\';
  const requests: Buffer[] = [
    // A path of 12,000 characters of which every one needs escaping in JSON.
    Buffer.from(`GET /${'"\\'.repeat(6000)} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`, 'latin1'),
    // Percent-escapes of control characters and of U+2028 (Node's parser refuses raw bytes above 0x7f).
    Buffer.from(`GET /v1/${'%E2%80%A8%00%0a%1b'.repeat(500)} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`),
    Buffer.from(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nx-request-id: ${longRequestId}\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}`),
    Buffer.from(`GET /health HTTP/1.1\r\nhost: x\r\nx-request-id: ${unicodeId}\r\nuser-agent: ${'u'.repeat(8000)}\r\nconnection: close\r\n\r\n`, 'utf8'),
    Buffer.from(`PROPPATCH /${'p'.repeat(9000)} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`),
  ];
  for (const bytes of requests) t.match(await rawRequest(gateway.origin, bytes), /^HTTP\/1\.1 [1-5]\d\d /);
  await waitForRequestLines(gateway, requests.length);

  const lines = gateway.requestLogs();
  t.equal(lines.length, requests.length, 'one line per request');
  for (const raw of gateway.logLines) {
    t.ok(Buffer.byteLength(raw) <= MAX_LOG_LINE_BYTES, `a line of ${Buffer.byteLength(raw)} bytes`);
    t.match(raw, /^[\x20-\x7e…]*\n$/, 'printable ASCII (and the cut mark): nothing a terminal or a log shipper could misread');
  }
  for (const line of lines) {
    t.ok(String(line['path']).length <= 129, `path cut: ${String(line['path']).length} characters`);
    t.notOk(String(line['request_id']).includes('rrrr'.repeat(100)), 'a caller id over 128 characters is replaced, not logged');
  }
  t.notOk(gateway.logLines.join('').includes('uuuuuuuu'), 'headers other than x-request-id are never logged');
});

t.test('error descriptions in log lines are cut and printable', async (t) => {
  const error = new Error(`${'é'.repeat(10_000)}"\n`);
  error.name = 'N'.repeat(10_000);
  const described = describeError(error);
  t.ok(described.length <= MAX_LOGGED_ERROR_CHARS + 1, `${described.length} characters`);
  t.match(described, /^N{64}: \?+…$/);
  t.equal(describeError('a thrown string'), 'string', 'a non-Error is described by its type only');
  t.equal(boundedText('a\u0000b\u2028c', 10), 'a?b?c');
  t.equal(boundedText('abcdef', 3), 'abc…');
});
