import t from 'tap';
import { SseEventTooLargeError, SseParser, type SseMessage } from '../src/engine/sse-parser.js';

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
