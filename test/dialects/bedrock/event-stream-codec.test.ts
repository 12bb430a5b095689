import t from 'tap';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { EventStreamDecoder, type EventMessage } from '../../../src/dialects/bedrock/event-stream.js';
import { GatewayError } from '../../../src/wire/gateway-error.js';
import { EventTooLargeError } from '../../../src/wire/event-too-large.js';
import { encodeMessage, eventMessage, preludeAnnouncing } from '../../helpers/event-stream-encoder.js';

// The mock's encoder checked by the AWS SDK's own codec, and the gateway's decoder by both, split at every byte.

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => Buffer.from(text, 'utf8'),
);

t.test("the test encoder's messages are what the AWS SDK's codec decodes", async (t) => {
  const message = eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'héllo' } });
  const decoded = codec.decode(message);
  t.same(decoded.headers[':event-type'], { type: 'string', value: 'contentBlockDelta' });
  t.same(decoded.headers[':message-type'], { type: 'string', value: 'event' });
  t.same(decoded.headers[':content-type'], { type: 'string', value: 'application/json' });
  t.match(JSON.parse(Buffer.from(decoded.body).toString('utf8')), { contentBlockIndex: 0, delta: { text: 'héllo' } });
  const empty = codec.decode(encodeMessage({}, ''));
  t.same(empty.headers, {});
  t.equal(empty.body.length, 0);
});

function decodeAll(bytes: Buffer, cuts: readonly number[], max = 1 << 20): EventMessage[] {
  const decoder = new EventStreamDecoder(max, 'brk');
  const out: EventMessage[] = [];
  let from = 0;
  for (const at of [...cuts, bytes.length]) {
    decoder.push(bytes.subarray(from, at));
    from = at;
    for (let message = decoder.next(); message; message = decoder.next()) out.push(message);
  }
  t.equal(decoder.partial, false);
  return out;
}

t.test("the gateway's decoder reads the SDK codec's messages (every header type) cut at every byte, and several per read", async (t) => {
  const sdkMessage = Buffer.from(
    codec.encode({
      headers: {
        ':event-type': { type: 'string', value: 'messageStop' },
        flag: { type: 'boolean', value: true },
        off: { type: 'boolean', value: false },
        byte: { type: 'byte', value: 7 },
        short: { type: 'short', value: 300 },
        int: { type: 'integer', value: 70000 },
        bin: { type: 'binary', value: new Uint8Array([1, 2, 3]) },
        when: { type: 'timestamp', value: new Date(0) },
        id: { type: 'uuid', value: '0123456789abcdef0123456789abcdef'.replace(/(.{8})(.{4})(.{4})(.{4})(.{12})/, '$1-$2-$3-$4-$5') },
        ':message-type': { type: 'string', value: 'event' },
      },
      body: Buffer.from('{"stopReason":"end_turn"}'),
    }),
  );
  const bytes = Buffer.concat([sdkMessage, eventMessage('metadata', { usage: {} }), sdkMessage]);
  for (let cut = 0; cut <= bytes.length; cut++) {
    const messages = decodeAll(bytes, [cut]);
    if (messages.length !== 3) t.fail(`cut at ${cut}: ${messages.length} messages`);
    if (messages[0]?.headers.get(':event-type') !== 'messageStop' || messages[0]?.payload.toString() !== '{"stopReason":"end_turn"}') t.fail(`cut at ${cut}: the first message is wrong`);
  }
  const messages = decodeAll(bytes, Array.from({ length: bytes.length }, (_, i) => i));
  t.same(messages.map((message) => message.headers.get(':event-type')), ['messageStop', 'metadata', 'messageStop'], 'one byte per read');
  t.equal(messages[0]!.headers.get(':message-type'), 'event', 'a string header after the other types is read');
});

t.test('a broken prelude CRC, a broken message CRC and lengths that do not fit are refused; an oversized message when its prelude is read', async (t) => {
  const good = eventMessage('messageStop', { stopReason: 'end_turn' });
  const flipped = (at: number) => {
    const copy = Buffer.from(good);
    copy[at] = copy[at]! ^ 1;
    return copy;
  };
  const preludeBad = flipped(9);
  const bodyBad = flipped(good.length - 10);
  const decoder = (bytes: Buffer, max = 1 << 20) => {
    const d = new EventStreamDecoder(max, 'brk');
    d.push(bytes);
    return () => d.next();
  };
  t.throws(decoder(preludeBad), GatewayError, 'prelude CRC');
  t.throws(decoder(bodyBad), GatewayError, 'message CRC');
  t.throws(decoder(preludeAnnouncing(8)), GatewayError, 'shorter than its overhead');
  t.throws(decoder(preludeAnnouncing(100, 200)), GatewayError, 'headers longer than the message');
  // 2 GiB announced: refused on its 12 bytes, nothing waited for.
  t.throws(decoder(preludeAnnouncing(2 ** 31), 4096), EventTooLargeError);
  t.throws(decoder(good, good.length - 1), EventTooLargeError, 'one byte over the limit');
  t.equal(decoder(good, good.length)()?.headers.get(':event-type'), 'messageStop', 'at the limit');
});
