// An answer sent before the request's body has arrived (413 from Content-Length, request_too_complex mid-body,
// 401) must reach a caller that is still sending: the gateway reads and discards the rest for a bounded while
// (LINGER_IDLE_MS, LINGER_MAX_MS, LINGER_MAX_BYTES) instead of closing under it, which the caller would see as EPIPE or a reset.
import { request } from 'node:http';
import { connect } from 'node:net';
import OpenAI, { APIConnectionError, APIError } from 'openai';
import t from 'tap';
import { startGateway } from '../helpers/gateway.js';

const MAX_BODY_BYTES = 256 * 1024;
const ask = (content: string) => ({ model: 'mock/gpt-4o', messages: [{ role: 'user', content }] });

t.test('the openai client gets a typed 413 for a body over MAX_BODY_BYTES, and does not retry it', async (t) => {
  const gateway = await startGateway({ maxBodyBytes: MAX_BODY_BYTES });
  t.teardown(() => gateway.close());
  const client = new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 2 });
  for (let i = 0; i < 5; i++) {
    const error = await client.chat.completions.create(ask('x'.repeat(MAX_BODY_BYTES + 300 * 1024)) as never).then(
      () => null,
      (caught: unknown) => caught,
    );
    t.ok(error instanceof APIError && !(error instanceof APIConnectionError), `round ${i}: a typed API error, not a connection error`);
    t.equal((error as APIError).status, 413);
    t.match((error as APIError).error, { gateway_code: 'request_too_large' });
  }
  await gateway.logged(() => (gateway.requestLogs().length >= 5 ? true : undefined)).catch(() => undefined);
  t.equal(gateway.requestLogs().length, 5, 'one request per call: nothing was retried');
});

t.test('a node:http client writing its whole body gets the 413 (Content-Length) or 400 (too complex), never EPIPE', async (t) => {
  const gateway = await startGateway({ maxBodyBytes: MAX_BODY_BYTES });
  t.teardown(() => gateway.close());
  const deep = Buffer.from(`{"model":"mock/gpt-4o","messages":[${'['.repeat(MAX_BODY_BYTES / 2)}`);
  const bodies = [
    { name: 'over MAX_BODY_BYTES', body: Buffer.from(JSON.stringify(ask('y'.repeat(MAX_BODY_BYTES + 300 * 1024)))), status: 413 },
    { name: 'too deep, found mid-body', body: Buffer.concat([deep, Buffer.alloc(MAX_BODY_BYTES / 2 - 100, 0x20)]), status: 400 },
  ];
  for (const { name, body, status } of bodies) {
    for (let i = 0; i < 10; i++) {
      const outcome = await new Promise<string>((resolve) => {
        const req = request(`${gateway.origin}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': body.length } });
        req.on('error', (error: NodeJS.ErrnoException) => resolve(`error ${error.code}`));
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve(`status ${res.statusCode}`));
        });
        req.end(body);
      });
      if (outcome !== `status ${status}`) t.fail(`${name}, round ${i}: ${outcome}`);
    }
    t.pass(`${name}: 10 answers read`);
  }
});

t.test('30 concurrent 16 MiB uploads each read their 413, by Content-Length or mid-body (chunked)', async (t) => {
  const gateway = await startGateway({ maxBodyBytes: 1024 * 1024 });
  t.teardown(() => gateway.close());
  const { hostname, port } = new URL(gateway.origin);
  const piece = Buffer.alloc(256 * 1024, 0x61);
  const upload = (chunked: boolean) =>
    new Promise<string>((resolve) => {
      const socket = connect(Number(port), hostname);
      let received = '';
      // Like curl, read the answer only once the body is sent (or sending failed): a reset before then loses it.
      socket.pause();
      socket.on('data', (data: Buffer) => (received += data.toString('latin1')));
      socket.on('error', () => socket.resume());
      socket.on('finish', () => socket.resume());
      socket.on('close', () => resolve(received));
      const framing = chunked ? 'transfer-encoding: chunked' : `content-length: ${16 * 1024 * 1024 + 10}`;
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${framing}\r\n\r\n${chunked ? 'a\r\n{"model":"\r\n' : '{"model":"'}`);
      let sent = 0;
      const pump = () => {
        while (sent < 64 && !socket.destroyed) {
          sent++;
          const more = socket.write(chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece);
          if (!more) return void socket.once('drain', pump);
        }
        if (!socket.destroyed) socket.end(chunked ? '3\r\n"}x\r\n0\r\n\r\n' : '"}');
      };
      pump();
    });
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => upload(i % 2 === 1)));
  const statuses = answers.map((text) => /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 'nothing');
  t.strictSame(statuses, Array.from({ length: 30 }, () => '413'), 'every uploader read its answer');
  for (const text of answers) t.match(text, /connection: close/i);
});
