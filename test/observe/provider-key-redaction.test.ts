import t from 'tap';
import { REDACTED, secretRedactor } from '../../src/observe/redact-secrets.js';
import { PROVIDER_KEY, envelopeOf, startGateway } from '../helpers/gateway.js';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';

const hi = [{ role: 'user', content: 'hi' }];

/** The data of every event of an SSE body, parsed: the caller's JSON must survive the redaction. */
function eventsOf(text: string): unknown[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: ') && frame !== 'data: [DONE]')
    .map((frame) => JSON.parse(frame.slice('data: '.length)) as unknown);
}

t.test('a provider that quotes its key never gets it to the caller or into the log', async (t) => {
  const quoted = `Invalid token: Bearer ${PROVIDER_KEY}`;
  const upstream = await startMockUpstream((req, res) => {
    switch (req.headers['x-request-id']) {
      case 'error':
        return sendJson(res, 401, { error: { message: quoted, type: 'invalid_request_error', code: PROVIDER_KEY } }, { 'retry-after': PROVIDER_KEY });
      case 'nested-error':
        return sendJson(res, 400, { error: { error: { message: quoted, code: 'bad_auth' } } });
      case 'answer':
        return sendJson(res, 200, completionBody('gpt-4o', `I was called with "Authorization: Bearer ${PROVIDER_KEY}"\n${PROVIDER_KEY}`));
      case 'stream': {
        startEventStream(res);
        // (A comment before the first event is held back: this one comes after it.)
        res.write(sseBody([chunk('gpt-4o', { content: `key=${PROVIDER_KEY}` })], { done: false }));
        res.write(`: debug ${PROVIDER_KEY}\n\n`);
        res.end(sseBody([chunk('gpt-4o', { content: 'fine' })]));
        return;
      }
      case 'stream-error': {
        startEventStream(res);
        res.end(sseBody([chunk('gpt-4o', { content: 'partial' }), { error: { message: quoted, code: PROVIDER_KEY, param: PROVIDER_KEY } }], { done: false }));
        return;
      }
      default:
        return sendJson(res, 500, {});
    }
  });
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  const error = await gateway.post({ model: 'mock/gpt-4o', messages: hi }, { 'x-request-id': 'error' });
  t.equal(error.status, 502);
  t.equal(error.headers.get('retry-after'), null, 'a header that quotes the key is dropped');
  t.match(await envelopeOf(error), { message: `Invalid token: Bearer ${REDACTED}`, provider_code: REDACTED, gateway_code: 'provider_auth_failed' });

  const nested = await gateway.post({ model: 'mock/gpt-4o', messages: hi }, { 'x-request-id': 'nested-error' });
  t.match(await envelopeOf(nested), { message: `Invalid token: Bearer ${REDACTED}`, provider_code: 'bad_auth' });

  const answer = await gateway.post({ model: 'mock/gpt-4o', messages: hi }, { 'x-request-id': 'answer' });
  const answerText = await answer.text();
  t.equal(Number(answer.headers.get('content-length')), Buffer.byteLength(answerText), 'the length is that of the redacted body');
  const body = JSON.parse(answerText) as { model: string; choices: { message: { content: string } }[] };
  t.equal(body.model, 'mock/gpt-4o');
  t.equal(body.choices[0]!.message.content, `I was called with "Authorization: Bearer ${REDACTED}"\n${REDACTED}`);

  const stream = await (await gateway.post({ model: 'mock/gpt-4o', messages: hi, stream: true }, { 'x-request-id': 'stream' })).text();
  t.match(stream, `: debug ${REDACTED}\n\n`, 'comments too');
  t.match(eventsOf(stream), [{ model: 'mock/gpt-4o', choices: [{ delta: { content: `key=${REDACTED}` } }] }, { choices: [{ delta: { content: 'fine' } }] }]);
  t.ok(stream.endsWith('data: [DONE]\n\n'));

  const streamError = await (await gateway.post({ model: 'mock/gpt-4o', messages: hi, stream: true }, { 'x-request-id': 'stream-error' })).text();
  t.match(eventsOf(streamError).at(-1), { error: { message: `Invalid token: Bearer ${REDACTED}`, provider_code: REDACTED, param: REDACTED, gateway_code: 'provider_stream_error' } });

  for (const text of [answerText, stream, streamError]) t.notOk(text.includes(PROVIDER_KEY));
  // The five requests' lines, the last one's included, are written by now.
  await gateway.logged(() => (gateway.requestLogs().length >= 5 ? true : undefined));
  t.notOk(gateway.logLines.join('').includes(PROVIDER_KEY), 'nor the log');
});

t.test('the redactor: JSON forms of the key, escapes kept valid, placeholders left alone', async (t) => {
  const key = 'nsk-live/0123456789abcdef';
  const redact = secretRedactor([key]);
  const clean = 'nothing secret here';
  t.equal(redact(clean), clean);
  t.equal(redact(`a ${key} b ${key}`), `a ${REDACTED} b ${REDACTED}`, 'every occurrence');
  t.equal(redact('nsk-live\\/0123456789abcdef'), REDACTED, 'with / escaped as \\/');
  // The key starts with "n": in `line\nsk-live…` its first letter is the n of the escape \n, which must go with it.
  const overlapping = JSON.stringify({ content: `line\n${key.slice(1)}` }).replace('/', '\\/');
  t.match(overlapping, '\\nsk-live\\/');
  t.same(JSON.parse(redact(overlapping)), { content: `line${REDACTED}` }, 'the JSON still parses');
  // A key starting with hex digits, matched inside the escape \u00e9 before it.
  const inUnicodeEscape = secretRedactor(['e9-live-0123456789abcdef'])('{"content":"\\u00e9-live-0123456789abcdef"}');
  t.same(JSON.parse(inUnicodeEscape), { content: REDACTED }, 'nor is a \\u escape cut in two');
  t.equal(redact(JSON.stringify({ content: `\\${key}` })), JSON.stringify({ content: `\\${REDACTED}` }), 'an escaped backslash before the key stays');
  const spelledOtherwise = 'sk\\u002dlive-0123456789abcdef';
  t.equal(secretRedactor(['sk-live-0123456789abcdef'])(spelledOtherwise), spelledOtherwise, 'a key spelled with \\u escapes is not caught (README)');
  t.equal(secretRedactor(['EMPTY'])('EMPTY'), 'EMPTY', 'a placeholder shorter than 16 characters is not a secret');
  t.equal(secretRedactor([])('anything'), 'anything');
});

t.test('a short configured key is not redacted, and start-up says so', async (t) => {
  const gateway = await startGateway({ env: { MOCK_API_KEY: 'ollama' } });
  t.teardown(() => gateway.close());
  t.ok(gateway.warnings.some((warning) => /^provider "mock": MOCK_API_KEY is shorter than 16 characters, so it is not redacted/.test(warning)));
});
