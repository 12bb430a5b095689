import { request } from 'node:http';
import { connect } from 'node:net';
import t from 'tap';
import { envelopeOf, startGateway } from '../helpers/gateway.js';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';

const user = { role: 'user', content: 'hi' };

t.test('schema violations are 400 with the offending path in param', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('x')));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  const cases: [string, unknown, Record<string, unknown>][] = [
    ['no model', { messages: [user] }, { param: 'model', code: 'missing_required_parameter' }],
    ['model not a string', { model: 7, messages: [user] }, { param: 'model', code: 'invalid_type' }],
    ['no messages', { model: 'mock/gpt-4o' }, { param: 'messages', code: 'missing_required_parameter' }],
    ['empty messages', { model: 'mock/gpt-4o', messages: [] }, { param: 'messages', code: 'empty_array' }],
    ['message without role', { model: 'mock/gpt-4o', messages: [user, { content: 'x' }] }, { param: 'messages[1].role', code: 'missing_required_parameter' }],
    ['role not a string', { model: 'mock/gpt-4o', messages: [{ role: 1, content: 'x' }] }, { param: 'messages[0].role', code: 'invalid_type' }],
    ['message not an object', { model: 'mock/gpt-4o', messages: ['hi'] }, { param: 'messages[0]', code: 'invalid_type' }],
    ['content a number', { model: 'mock/gpt-4o', messages: [{ role: 'user', content: 5 }] }, { param: 'messages[0].content' }],
    ['content part without type', { model: 'mock/gpt-4o', messages: [{ role: 'user', content: [{ text: 'x' }] }] }, { param: 'messages[0].content[0].type' }],
    ['stream not a boolean', { model: 'mock/gpt-4o', messages: [user], stream: 'yes' }, { param: 'stream', code: 'invalid_type' }],
    ['tools not an array', { model: 'mock/gpt-4o', messages: [user], tools: {} }, { param: 'tools', code: 'invalid_type' }],
    ['tool_choice unknown word', { model: 'mock/gpt-4o', messages: [user], tool_choice: 'always' }, { param: 'tool_choice', code: 'invalid_value' }],
    ['tool_choice function without name', { model: 'mock/gpt-4o', messages: [user], tool_choice: { type: 'function', function: {} } }, { param: 'tool_choice.function.name' }],
  ];
  for (const [name, body, expected] of cases) {
    const response = await gateway.post(body);
    t.equal(response.status, 400, `${name}: 400`);
    t.equal(response.headers.get('x-should-retry'), 'false');
    const error = await envelopeOf(response);
    t.match(error, { type: 'invalid_request_error', gateway_code: 'invalid_request', origin: 'gateway', ...expected }, name);
    t.match(error['message'], new RegExp(String(expected['param']).replace(/[[\].]/g, '\\$&')), `${name}: the message names the parameter`);
  }
  t.equal(upstream.requests.length, 0);
});

t.test('accepted shapes pass: content parts, null content with tool_calls, tool messages, named tool_choice', async (t) => {
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('x')));
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const response = await gateway.post({
    model: 'mock/gpt-4o',
    messages: [
      { role: 'developer', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'what is in this image?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '42' },
    ],
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
    tool_choice: { type: 'function', function: { name: 'f' } },
    reasoning_effort: 'low',
    stream: false,
  });
  t.equal(response.status, 200);
  t.equal(upstream.requests.length, 1);
});

t.test('bodies that are not a JSON object', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  for (const [body, gatewayCode, param] of [
    ['{"model": "mock/gpt-4o", ', 'invalid_json', null],
    ['', 'invalid_json', null],
    ['[1, 2]', 'invalid_request', null],
    ['"text"', 'invalid_request', null],
    ['null', 'invalid_request', null],
  ] as const) {
    const response = await gateway.post(body);
    t.equal(response.status, 400, `${JSON.stringify(body)}: 400`);
    t.match(await envelopeOf(response), { gateway_code: gatewayCode, param });
  }
});

t.test('malformed JSON is reported without echoing the body', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const response = await gateway.post('{"model":"mock/gpt-4o","messages":[{"role":"user","content":"secret-content-9d1"}],}');
  const error = await envelopeOf(response);
  t.equal(error['gateway_code'], 'invalid_json');
  t.notMatch(error['message'], /secret-content/);
});

t.test('invalid UTF-8 is invalid_json', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const body = Buffer.concat([Buffer.from('{"model":"mock/gpt-4o","messages":[{"role":"user","content":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}]}')]);
  const response = await fetch(`${gateway.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  t.equal(response.status, 400);
  t.match(await envelopeOf(response), { gateway_code: 'invalid_json', message: /UTF-8/ });
});

t.test('content type: missing or not JSON is 415', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const body = JSON.stringify({ model: 'mock/gpt-4o', messages: [user] });
  for (const contentType of [undefined, 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1']) {
    const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
    const response = await fetch(`${gateway.origin}/v1/chat/completions`, { method: 'POST', headers, body: new Blob([body]) });
    t.equal(response.status, 415, `${contentType ?? 'none'}: 415`);
    t.equal(response.headers.get('x-should-retry'), 'false');
    t.match(await envelopeOf(response), { gateway_code: 'unsupported_media_type', type: 'invalid_request_error' });
  }
  const gzip = await gateway.post(body, { 'content-encoding': 'gzip' });
  t.equal(gzip.status, 415, 'a compressed body is refused, not misread');
});

t.test('a body over MAX_BODY_BYTES is 413, whether Content-Length says so or not', async (t) => {
  const gateway = await startGateway({ maxBodyBytes: 1000 });
  t.teardown(() => gateway.close());
  const big = JSON.stringify({ model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(2000) }] });
  const declared = await gateway.post(big);
  t.equal(declared.status, 413);
  t.equal(declared.headers.get('x-should-retry'), 'false');
  t.match(await envelopeOf(declared), { gateway_code: 'request_too_large', message: /1000 bytes/ });

  // Chunked: no Content-Length, so the limit is enforced while reading.
  const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(`${gateway.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    for (let i = 0; i < 4; i++) req.write(big.slice(i * 600, (i + 1) * 600));
    req.end();
  });
  t.equal(chunked.status, 413);
  t.match(JSON.parse(chunked.body), { error: { gateway_code: 'request_too_large' } });
});

t.test('a caller that hangs up mid-body is logged as caller_disconnected, not as an internal error', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const { port } = new URL(gateway.origin);
  await new Promise<void>((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nX-Request-Id: hangup-1\r\n\r\n{"model"');
      setTimeout(() => socket.destroy(), 50);
    });
    socket.on('close', () => resolve());
  });
  t.match(await gateway.requestLog('hangup-1'), { gateway_code: 'caller_disconnected', status: 499 });
  t.notOk(gateway.logLines.some((line) => line.includes('internal error')));
});
