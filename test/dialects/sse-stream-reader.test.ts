import t from 'tap';
import type { StreamReader, StreamStep, StreamTranslator } from '../../src/dialects/dialect.js';
import { sseStreamReader } from '../../src/dialects/sse-stream-reader.js';
import { EventTooLargeError } from '../../src/wire/event-too-large.js';
import type { SseMessage } from '../../src/wire/sse-parser.js';

/** A translator that echoes each event's data and records what it was asked to translate. */
function echo(): StreamTranslator & { seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    translate(message: SseMessage): StreamStep {
      const data = message.kind === 'event' ? message.data : '';
      seen.push(data);
      if (data === 'skip') return { frames: '' };
      return data === '[DONE]' ? { frames: 'done;', end: 'done' } : { frames: `${data};` };
    },
  };
}

/** Pulls every step of one read, as relay-stream does: up to the end. */
function readAll(reader: StreamReader, text: string): string[] {
  reader.push(Buffer.from(text));
  const frames: string[] = [];
  for (let step = reader.next(); step !== undefined; step = reader.next()) {
    frames.push(step.frames);
    if (step.end) break;
  }
  return frames;
}

t.test('a read is translated one event at a time, as the engine pulls', async (t) => {
  const translator = echo();
  const reader = sseStreamReader(translator, 1024);
  reader.push(Buffer.from('data: skip\n\ndata: a\n\ndata: b\n\ndata: c\n\n'));
  t.equal(reader.next()?.frames, '', 'an event that sends nothing');
  t.strictSame(translator.seen, ['skip'], 'the rest of the read is not translated yet');
  t.equal(reader.next()?.frames, 'a;');
  t.strictSame(translator.seen, ['skip', 'a'], 'the first event that sends something is translated alone');
  t.equal(reader.next()?.frames, 'b;');
  t.equal(reader.next()?.frames, 'c;');
  t.equal(reader.next(), undefined, 'nothing more in this read');
});

t.test('events cut across reads wait for their end; nothing after the end is translated', async (t) => {
  const translator = echo();
  const reader = sseStreamReader(translator, 1024);
  t.strictSame(readAll(reader, 'data: a\n\n'), ['a;']);
  t.strictSame(readAll(reader, 'data: b\n\nda'), ['b;']);
  t.strictSame(readAll(reader, 'ta: c\n\ndata: [DONE]\n\ndata: after\n\n'), ['c;', 'done;']);
  t.notOk(translator.seen.includes('after'));
  reader.end();
});

t.test('an event larger than the limit is the framing-neutral EventTooLargeError', async (t) => {
  const reader = sseStreamReader(echo(), 16);
  t.throws(() => readAll(reader, `data: ${'x'.repeat(64)}`), EventTooLargeError);
});
