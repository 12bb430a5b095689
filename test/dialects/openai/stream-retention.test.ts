// A paused stream (a caller that reads slowly) keeps only what waits for the next read: not the read it came from.
// Strings sliced from a read share its memory, so a kept slice would hold the whole read (64 KiB on a socket) for
// as long as the caller is slow. Each test keeps many readers alive after one large read and measures the heap.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { openaiDialect } from '../../../src/dialects/openai/index.js';
import { SseParser } from '../../../src/wire/sse-parser.js';

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

const READERS = 48;
const READ_BYTES = 1 << 20;
const MIB = 1024 * 1024;

function heapUsedAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** A read of about READ_BYTES of whole chunk events (ASCII, so one byte per character in memory too), then `tail`. */
function largeRead(tail: string): Buffer {
  const event = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"${'x'.repeat(200)}"},"finish_reason":null}]}\n\n`;
  return Buffer.from(event.repeat(Math.ceil(READ_BYTES / event.length)) + tail);
}

// Values of 13 characters or more: V8 copies shorter slices anyway.
const UNFINISHED = [
  ['an unfinished line', 'data: {"content":"half', 'way"}\n\n', { kind: 'event', event: undefined, data: '{"content":"halfway"}', id: undefined }],
  [
    'an unfinished event and its id',
    'id: event-0000000000007\ndata: {"first":"line"}\ndata: {"second":"line"}\n',
    '\n',
    { kind: 'event', event: undefined, data: '{"first":"line"}\n{"second":"line"}', id: 'event-0000000000007' },
  ],
  ['an event name', 'event: a-long-event-name\n', 'data: x\n\n', { kind: 'event', event: 'a-long-event-name', data: 'x', id: undefined }],
] as const;

for (const [what, tail, nextRead, completed] of UNFINISHED) {
  t.test(`the parser keeps ${what}, not the read it came from`, async (t) => {
    const before = heapUsedAfterGc();
    const parsers = Array.from({ length: READERS }, () => {
      const parser = new SseParser(1 << 22);
      t.ok(parser.push(largeRead(tail)).length > 1000, 'the read was parsed');
      return parser;
    });
    const retained = heapUsedAfterGc() - before;
    t.ok(retained < (READERS * READ_BYTES) / 8, `${READERS} parsers hold ${(retained / MIB).toFixed(1)} MiB after ${READERS} reads of 1 MiB (a read kept would be ≥ ${READERS} MiB)`);
    t.strictSame(parsers[0]!.push(Buffer.from(nextRead)), [completed], 'what was kept completes the event with the next read');
  });
}

t.test('the openai stream reader drops a read once every step of it is taken', async (t) => {
  const before = heapUsedAfterGc();
  const readers = Array.from({ length: READERS }, () => {
    const reader = openaiDialect.createStreamReader({ routingModel: 'openai/m', providerId: 'openai', hideUsage: false, includeUsage: false, maxEventChars: 1 << 22 });
    reader.push(largeRead(''));
    let steps = 0;
    for (let step = reader.next(); step !== undefined; step = reader.next()) steps++;
    t.ok(steps > 0, 'the read was relayed');
    return reader;
  });
  const retained = heapUsedAfterGc() - before;
  t.ok(retained < (READERS * READ_BYTES) / 8, `${READERS} readers hold ${(retained / MIB).toFixed(1)} MiB after ${READERS} reads of 1 MiB (a read kept would be ≥ ${READERS} MiB)`);
  t.equal(readers.length, READERS);
});

t.test('an event longer than a read, spread over many reads, arrives whole', async (t) => {
  // Past a read's length the unfinished part is no longer copied with each read (copying stays linear).
  const content = 'é世👋x'.repeat(60_000);
  const wire = Buffer.from(`id: ${'i'.repeat(100)}\ndata: {"content":"${content}"}\ndata: second line\n\n`);
  const parser = new SseParser(1 << 24);
  const messages = [];
  for (let at = 0; at < wire.length; at += 65_536) messages.push(...parser.push(wire.subarray(at, at + 65_536)));
  t.strictSame(messages, [{ kind: 'event', event: undefined, data: `{"content":"${content}"}\nsecond line`, id: 'i'.repeat(100) }]);
});
