import t from 'tap';
import { bedrockGateway } from '../../helpers/bedrock-gateway.js';
import { encodeEvent, textEvents } from '../../helpers/mock-bedrock.js';
import { encodeMessage, preludeAnnouncing } from '../../helpers/event-stream-encoder.js';

// Broken framing through a bedrock route: before the first content the caller gets the JSON 502, after it the
// final error event; the body's end decides between a finished answer, an interrupted one and a broken one.

const ask = { model: 'brk/nova', messages: [{ role: 'user', content: 'hi' }], stream: true };
const events = textEvents(['Hello', ' world']);
const bytesOf = (list: typeof events) => Buffer.concat(list.map(encodeEvent));
/** The first content (messageStart and one delta), then the rest. */
const head = bytesOf(events.slice(0, 2));

function corrupt(message: Buffer, at: number): Buffer {
  const copy = Buffer.from(message);
  copy[at] = copy[at]! ^ 0xff;
  return copy;
}

function lastEvent(text: string): Record<string, unknown> {
  return JSON.parse(text.trim().split('\n\n').at(-1)!.replace(/^data: /, '')) as Record<string, unknown>;
}

t.test('a broken CRC before the first content: the JSON 502 invalid_upstream_response, nothing streamed', async (t) => {
  const delta = encodeEvent(events[1]!);
  const cases = [bytesOf(events.slice(0, 1)), bytesOf(events.slice(0, 1))].map((start, i) => Buffer.concat([start, corrupt(delta, i === 0 ? 9 : delta.length - 6)]));
  const { gateway } = await bedrockGateway(t, (_call, n) => ({ bytes: cases[n]!, pieceSize: 4 }));
  for (const what of ['prelude CRC', 'message CRC']) {
    const response = await gateway.post(ask);
    t.equal(response.status, 502, what);
    const body = (await response.json()) as { error: Record<string, unknown> };
    t.match(body.error, { gateway_code: 'invalid_upstream_response', provider: 'brk', message: /CRC does not match/ }, what);
  }
});

t.test('a broken CRC, an oversized prelude or a body ending inside a message after the first content: the final error event', async (t) => {
  const tail = encodeEvent(events[2]!);
  const cases = [
    Buffer.concat([head, corrupt(tail, tail.length - 6)]),
    Buffer.concat([head, preludeAnnouncing(2 ** 31 - 1)]),
    Buffer.concat([head, tail.subarray(0, tail.length - 3)]),
  ];
  const { gateway } = await bedrockGateway(t, (_call, n) => ({ bytes: cases[n]!, cuts: [head.length - 1, head.length + 5] }), { maxUpstreamBodyBytes: 64 * 1024 });
  for (const what of ['message CRC', '2 GiB announced', 'ended inside a message']) {
    const response = await gateway.post(ask);
    t.equal(response.status, 200, what);
    const text = await response.text();
    t.match(text, /"content":"Hello"/, what);
    t.notMatch(text, /\[DONE\]/, what);
    t.match(lastEvent(text), { error: { gateway_code: 'invalid_upstream_response', provider: 'brk' } }, what);
  }
});

t.test('the end of the body: between messages before messageStop is interrupted; after messageStop without metadata, [DONE]', async (t) => {
  const cases = [bytesOf(events.slice(0, 3)), bytesOf(events.slice(0, 5))];
  const { gateway } = await bedrockGateway(t, (_call, n) => ({ bytes: cases[n]!, pieceSize: 10 }));
  const interrupted = await (await gateway.post(ask)).text();
  t.match(lastEvent(interrupted), { error: { gateway_code: 'upstream_stream_interrupted' } });
  const done = await (await gateway.post({ ...ask, stream_options: { include_usage: true } })).text();
  t.match(done, /"finish_reason":"stop"/);
  t.match(done, /data: \[DONE\]\n\n$/);
  t.notMatch(done, /"usage"/, 'no metadata: no usage chunk');
});

t.test('event types the gateway does not know and non-string headers are ignored; another content type is invalid_upstream_response', async (t) => {
  const odd = encodeMessage({ ':event-type': 'someFutureEvent', ':message-type': 'event', ':content-type': 'application/json' }, '{"x":1}');
  const cases = [
    { bytes: Buffer.concat([bytesOf(events.slice(0, 2)), odd, bytesOf(events.slice(2))]), pieceSize: 6 },
    { bytes: bytesOf(events), contentType: 'text/event-stream' },
  ];
  const { gateway } = await bedrockGateway(t, (_call, n) => cases[n]!);
  const text = await (await gateway.post(ask)).text();
  t.match(text, /"content":"Hello"[\s\S]*"content":" world"[\s\S]*data: \[DONE\]/);
  const wrong = await gateway.post(ask);
  t.equal(wrong.status, 502);
  t.match(((await wrong.json()) as { error: unknown }).error, { gateway_code: 'invalid_upstream_response', message: /not application\/vnd\.amazon\.eventstream/ });
});
