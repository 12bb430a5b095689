import t from 'tap';
import type { StreamStep, StreamTranslator } from '../src/dialects/dialect.js';
import { sseStreamReader } from '../src/dialects/sse-stream-reader.js';
import { EventTooLargeError } from '../src/engine/event-too-large.js';
import type { SseMessage } from '../src/engine/sse-parser.js';

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

t.test('until something was sent, a read is translated one event at a time, as the engine asks', async (t) => {
  const translator = echo();
  const reader = sseStreamReader(translator, 1024);
  const steps = reader.read(Buffer.from('data: skip\n\ndata: a\n\ndata: b\n\ndata: c\n\n'))[Symbol.iterator]();
  t.equal(steps.next().value?.frames, '', 'an event that sends nothing');
  t.strictSame(translator.seen, ['skip'], 'the rest of the read is not translated yet');
  t.equal(steps.next().value?.frames, 'a;');
  t.strictSame(translator.seen, ['skip', 'a'], 'the first event that sends something is translated alone');
  t.strictSame([...{ [Symbol.iterator]: () => steps }].map((step) => step.frames), ['b;', 'c;']);
});

t.test('after the first frames, a read comes whole, up to the step that ends the stream', async (t) => {
  const translator = echo();
  const reader = sseStreamReader(translator, 1024);
  t.strictSame([...reader.read(Buffer.from('data: a\n\n'))].map((step) => step.frames), ['a;']);
  const steps = [...reader.read(Buffer.from('data: b\n\nda'))];
  t.strictSame(steps.map((step) => step.frames), ['b;'], 'an event cut across reads waits for its end');
  t.strictSame([...reader.read(Buffer.from('ta: c\n\ndata: [DONE]\n\ndata: after\n\n'))].map((step) => step.frames), ['c;', 'done;']);
  t.notOk(translator.seen.includes('after'), 'nothing after the end is translated');
  reader.end();
});

t.test('an event larger than the limit is the framing-neutral EventTooLargeError', async (t) => {
  const reader = sseStreamReader(echo(), 16);
  t.throws(() => [...reader.read(Buffer.from(`data: ${'x'.repeat(64)}`))], EventTooLargeError);
});
