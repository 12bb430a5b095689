import t from 'tap';
import { SseEventTooLargeError, SseParser, type SseMessage } from '../../src/wire/sse-parser.js';

function parseInPieces(pieces: readonly Buffer[]): SseMessage[] {
  const parser = new SseParser(1 << 20);
  return [...pieces.flatMap((piece) => parser.push(piece)), ...parser.end()];
}

const STREAM =
  ': keep-alive\r\n\r\n' +
  'data: {"content":"héllo 👋 世界"}\r\n\r\n' +
  'event: message\nid: 7\ndata: line one\ndata: line two\n\n' +
  'data:no-space\r\r' +
  'retry: 100\nunknown: x\ndata\n\n' +
  'data: [DONE]\n\n';

const EXPECTED: SseMessage[] = [
  { kind: 'comment', text: 'keep-alive' },
  { kind: 'event', event: undefined, data: '{"content":"héllo 👋 世界"}', id: undefined },
  { kind: 'event', event: 'message', data: 'line one\nline two', id: '7' },
  // The last event id carries over to later events, as the SSE spec says.
  { kind: 'event', event: undefined, data: 'no-space', id: '7' },
  { kind: 'event', event: undefined, data: '', id: '7' },
  { kind: 'event', event: undefined, data: '[DONE]', id: '7' },
];

t.test('one read: comments, CRLF, CR, LF, multi-line data, fields', async (t) => {
  t.same(parseInPieces([Buffer.from(STREAM)]), EXPECTED);
});

t.test('split at every byte boundary gives the same messages', async (t) => {
  const bytes = Buffer.from(STREAM);
  for (let i = 1; i < bytes.length; i++) {
    const got = parseInPieces([bytes.subarray(0, i), bytes.subarray(i)]);
    if (JSON.stringify(got) !== JSON.stringify(EXPECTED)) {
      t.same(got, EXPECTED, `split at byte ${i}`);
      return;
    }
  }
  t.pass('every two-piece split parses identically');
});

t.test('one byte per read gives the same messages', async (t) => {
  const bytes = Buffer.from(STREAM);
  t.same(parseInPieces([...bytes].map((byte) => Buffer.from([byte]))), EXPECTED);
});

t.test('an event without its closing blank line is not dispatched', async (t) => {
  t.same(parseInPieces([Buffer.from('data: a\n\ndata: incomplete')]), [{ kind: 'event', event: undefined, data: 'a', id: undefined }]);
});

t.test('an event larger than the limit is refused rather than buffered', async (t) => {
  const parser = new SseParser(1000);
  t.throws(() => parser.push(Buffer.from(`data: ${'x'.repeat(2000)}`)), SseEventTooLargeError, 'one long line');
  const lines = new SseParser(1000);
  t.throws(() => lines.push(Buffer.from(`data: ${'x'.repeat(400)}\n`.repeat(3))), SseEventTooLargeError, 'many data lines');
});

t.test('an event over the limit after others in the same read: those are handed on, the refusal comes at the next read or the end', async (t) => {
  const data = (data: string) => ({ kind: 'event', event: undefined, data, id: undefined });
  const read = Buffer.from(`data: a\n\ndata: b\n\ndata: ${'x'.repeat(2000)}`);
  const parser = new SseParser(1000);
  t.same(parser.push(read), [data('a'), data('b')]);
  t.throws(() => parser.push(Buffer.from('more of it\n\ndata: c\n\n')), SseEventTooLargeError, 'the next read');
  t.throws(() => parser.end(), SseEventTooLargeError, 'and the end, once refused');
  const ended = new SseParser(1000);
  t.same(ended.push(read), [data('a'), data('b')]);
  t.throws(() => ended.end(), SseEventTooLargeError, 'a stream that ends right after it');
  t.throws(() => new SseParser(1000).push(Buffer.from(`data: ${'x'.repeat(2000)}\n\ndata: a\n\n`)), SseEventTooLargeError, 'first in its read: refused at once');
});

t.test('a byte-order mark opening the stream is ignored, wherever the reads split it', async (t) => {
  const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(STREAM)]);
  t.same(parseInPieces([bytes]), EXPECTED, 'in one read');
  for (let i = 1; i <= 4; i++) t.same(parseInPieces([bytes.subarray(0, i), bytes.subarray(i)]), EXPECTED, `split at byte ${i}`);
  t.same(parseInPieces([...bytes].map((byte) => Buffer.from([byte]))), EXPECTED, 'one byte per read');
});

t.test('only one byte-order mark, and only at the very start, is ignored', async (t) => {
  const data = (data: string) => ({ kind: 'event', event: undefined, data, id: undefined });
  t.same(parseInPieces([Buffer.from('\uFEFF\uFEFFdata: a\n\ndata: b\n\n')]), [data('b')], 'a second mark makes the first field name unknown, as the spec says');
  t.same(parseInPieces([Buffer.from('data: a\n\n\uFEFFdata: b\n\ndata: c\n\n')]), [data('a'), data('c')], 'a mark later in the stream is not stripped');
  t.same(parseInPieces([Buffer.from('data: \uFEFFa\n\n')]), [data('\uFEFFa')], 'nor inside a value');
});
