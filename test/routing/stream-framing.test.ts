import { connect, type Socket } from 'node:net';
import t from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { startMockUpstream } from '../helpers/mock-upstream.js';
import { chunk, sseBody, startEventStream, writeInPieces } from '../helpers/sse-upstream.js';

// Read at the HTTP level: a client that tolerates a broken chunked body (or the openai SDK) would hide
// a stream whose terminating chunk went out before its events.

interface RawResponse {
  readonly head: string;
  readonly body: string;
}

/** Reads one HTTP/1.1 response from `buffer`, strictly: chunked framing must be exact. Returns it and what follows. */
function parseResponse(buffer: Buffer): { response: RawResponse; rest: Buffer } | undefined {
  const headEnd = buffer.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const head = buffer.subarray(0, headEnd).toString('latin1');
  if (!/^HTTP\/1\.1 \d{3} /.test(head)) throw new Error(`not an HTTP response head: ${JSON.stringify(head.slice(0, 40))}`);
  if (!/\r\ntransfer-encoding: chunked/i.test(head)) throw new Error('expected a chunked body');
  const pieces: Buffer[] = [];
  let at = headEnd + 4;
  for (;;) {
    const lineEnd = buffer.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const sizeText = buffer.subarray(at, lineEnd).toString('latin1');
    if (!/^[0-9a-f]+$/i.test(sizeText)) throw new Error(`bad chunk size line ${JSON.stringify(sizeText.slice(0, 40))}`);
    const size = Number.parseInt(sizeText, 16);
    const dataEnd = lineEnd + 2 + size;
    if (buffer.length < dataEnd + 2) return undefined;
    if (buffer.subarray(dataEnd, dataEnd + 2).toString('latin1') !== '\r\n') throw new Error('chunk data not followed by CRLF');
    if (size === 0) return { response: { head, body: Buffer.concat(pieces).toString('utf8') }, rest: buffer.subarray(dataEnd + 2) };
    pieces.push(buffer.subarray(lineEnd + 2, dataEnd));
    at = dataEnd + 2;
  }
}

/** Sends `requests` one after the other on one keep-alive connection, each after the previous answer is whole. */
async function exchange(port: number, requests: readonly string[]): Promise<{ responses: RawResponse[]; trailing: Buffer }> {
  const socket: Socket = connect(port, '127.0.0.1');
  const responses: RawResponse[] = [];
  let buffer: Buffer = Buffer.alloc(0);
  let sent = 0;
  socket.write(requests[sent++]!);
  return new Promise((resolve, reject) => {
    const finish = () => {
      socket.destroy();
      resolve({ responses, trailing: buffer });
    };
    socket.on('error', reject);
    socket.on('close', finish);
    socket.on('data', (data: Buffer) => {
      buffer = Buffer.concat([buffer, data]);
      try {
        for (let parsed = parseResponse(buffer); parsed; parsed = parseResponse(buffer)) {
          responses.push(parsed.response);
          buffer = parsed.rest;
          if (sent < requests.length) socket.write(requests[sent++]!);
          else setTimeout(finish, 100); // anything still arriving after the last answer is garbage
        }
      } catch (error) {
        socket.destroy();
        reject(error as Error);
      }
    });
  });
}

function post(body: unknown): string {
  const text = JSON.stringify(body);
  return `POST /v1/chat/completions HTTP/1.1\r\nhost: gateway\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
}

t.test('a streamed answer is one well-formed chunked body ending after [DONE]; the connection serves the next request', async (t) => {
  const texts = ['Hel', 'lo', ' wor', 'ld'];
  const upstream = await startMockUpstream(async (_req, res) => {
    startEventStream(res);
    // One event per read, so the gateway writes each on its own, as a live stream does.
    await writeInPieces(res, texts.map((text) => sseBody([chunk('gpt-4o-2024-11-20', { content: text })], { done: false })), 5);
    res.end('data: [DONE]\n\n');
  });
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const ask = { model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true };
  const port = Number(new URL(gateway.origin).port);

  const { responses, trailing } = await exchange(port, [post(ask), post(ask)]);
  t.equal(responses.length, 2, 'two whole answers on one connection');
  t.equal(trailing.length, 0, 'nothing follows the last answer');
  for (const [i, response] of responses.entries()) {
    t.match(response.head, /^HTTP\/1\.1 200 /, `answer ${i + 1} is 200`);
    t.ok(response.body.endsWith('data: [DONE]\n\n'), `answer ${i + 1}'s body ends right after [DONE]`);
    const events = response.body.split('\n\n').filter((frame) => frame.startsWith('data: ')).map((frame) => frame.slice(6));
    t.equal(events.length, texts.length + 1, `answer ${i + 1} has every event`);
    const contents = events.slice(0, -1).map((event) => (JSON.parse(event) as { choices: { delta: { content: string } }[] }).choices[0]!.delta.content);
    t.same(contents, texts, `answer ${i + 1}'s events are in order`);
  }
});
