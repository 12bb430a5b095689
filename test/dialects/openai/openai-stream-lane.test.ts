import t from 'tap';
import type { StreamReader, StreamStep } from '../../../src/dialects/dialect.js';
import { openaiDialect } from '../../../src/dialects/openai/index.js';
import { createOpenAIStreamTranslator } from '../../../src/dialects/openai/stream.js';
import { sseStreamReader } from '../../../src/dialects/sse-stream-reader.js';
import { createEventGenerator, seededRandom } from './hostile-events.js';

// The OpenAI reader's fast lane takes common chunks straight from the parser's text. Whatever the stream and
// however it is cut into reads, the caller must get exactly what the parser and translator alone give: the
// same bytes, the same usage, the same end. Streams here mix runs of common chunks with hostile events,
// comments, event/id fields, CRLF, multi-line data, the usage chunk and [DONE], cut at random (inside
// multi-byte characters too).

const STREAMS = 400;

const OPENING = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763700000,"model":"gpt-4o"';
const COMMON_RESTS = [
  ',"choices":[{"index":0,"delta":{"content":" token"},"finish_reason":null}],"usage":null}',
  ',"choices":[{"index":0,"delta":{"content":" é 世界 👋"},"finish_reason":null}],"usage":null}',
  ',"choices":[{"index":0,"delta":{"content":"\\u00e9\\n"},"finish_reason":null}]}',
  ',"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}',
];
const ODD_RESTS = [
  ',"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}',
  ',"error":{"message":"boom"}}',
  'model":"leak"}',
  ',"x":"\\u006dodel"}',
  ',"usage":null,"usage":null}',
  ',"model":"again"}',
  `,"choices":[{"index":0,"delta":{"content":"${'x'.repeat(400)}"},"finish_reason":null}],"usage":null}`, // over maxEventChars
];

function streamText(random: () => number, hostile: () => { data: string }): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const lineEnd = random() < 0.1 ? '\r\n' : '\n';
  let text = random() < 0.05 ? '\uFEFF' : '';
  const events = 5 + Math.floor(random() * 60);
  for (let i = 0; i < events; i++) {
    const roll = random();
    if (roll < 0.7) text += `data: ${OPENING}${pick(COMMON_RESTS)}${lineEnd}${lineEnd}`;
    else if (roll < 0.78) text += `data: ${OPENING}${pick(ODD_RESTS)}${lineEnd}${lineEnd}`;
    else if (roll < 0.84) text += `data: ${hostile().data.replaceAll('\n', ' ')}${lineEnd}${lineEnd}`;
    else if (roll < 0.88) text += `: keep-alive${lineEnd}`;
    else if (roll < 0.91) text += `event: chunk${lineEnd}data: ${OPENING}${pick(COMMON_RESTS)}${lineEnd}${lineEnd}`;
    else if (roll < 0.94) text += `id: ${i}${lineEnd}data: ${OPENING}${pick(COMMON_RESTS)}${lineEnd}${lineEnd}`;
    else if (roll < 0.97) text += `data: ${OPENING}${lineEnd}data: ${pick(COMMON_RESTS)}${lineEnd}${lineEnd}`;
    else text += `data:${OPENING}${pick(COMMON_RESTS)}${lineEnd}${lineEnd}`;
  }
  if (random() < 0.8) text += `data: [DONE]${lineEnd}${lineEnd}`;
  return text;
}

function cut(random: () => number, bytes: Buffer): Buffer[] {
  const reads: Buffer[] = [];
  for (let at = 0; at < bytes.length; ) {
    const size = random() < 0.3 ? 1 + Math.floor(random() * 8) : 1 + Math.floor(random() * 4000);
    reads.push(bytes.subarray(at, at + size));
    at += size;
  }
  return reads;
}

interface Relayed {
  readonly frames: string;
  readonly usages: string[];
  readonly end: StreamStep['end'];
  readonly error?: string;
}

function relay(reader: StreamReader, reads: readonly Buffer[]): Relayed {
  let frames = '';
  const usages: string[] = [];
  try {
    for (const read of reads) {
      reader.push(read);
      for (let step = reader.next(); step !== undefined; step = reader.next()) {
        frames += step.frames;
        if (step.usage) usages.push(JSON.stringify(step.usage));
        if (step.end) return { frames, usages, end: step.end };
      }
    }
    reader.end();
  } catch (error) {
    return { frames, usages, end: undefined, error: (error as Error).name };
  }
  return { frames, usages, end: undefined };
}

for (const hideUsage of [true, false]) {
  t.test(`${STREAMS} mixed streams cut at random, hideUsage ${hideUsage}: the lane changes nothing the caller gets`, async (t) => {
    const random = seededRandom(0x13_03 + Number(hideUsage));
    const hostile = createEventGenerator(0x13_04);
    const maxEventChars = 300;
    const context = { routingModel: 'mock/gpt-4o', providerId: 'mock', hideUsage, includeUsage: false, maxEventChars };
    let differences = 0;
    let laneFrames = 0;
    for (let i = 0; i < STREAMS && differences < 3; i++) {
      const reads = cut(random, Buffer.from(streamText(random, hostile)));
      const withLane = relay(openaiDialect.createStreamReader(context), reads);
      const withoutLane = relay(sseStreamReader(createOpenAIStreamTranslator(context), maxEventChars), reads);
      if (JSON.stringify(withLane) !== JSON.stringify(withoutLane)) {
        differences++;
        t.fail(`stream ${i} differs: ${JSON.stringify(withLane).slice(0, 400)} vs ${JSON.stringify(withoutLane).slice(0, 400)}`);
      }
      laneFrames += withLane.frames.split('mock/gpt-4o').length - 1;
    }
    t.equal(differences, 0, 'every stream relayed alike');
    t.ok(laneFrames > STREAMS * 10, `chunks relayed with the routing model: ${laneFrames}`);
  });
}

t.test('the lane takes the runs of common chunks: the parser sees only what it cannot take', async (t) => {
  const context = { routingModel: 'mock/gpt-4o', providerId: 'mock', hideUsage: true, includeUsage: false, maxEventChars: 1 << 20 };
  const translator = createOpenAIStreamTranslator(context);
  let translated = 0;
  const counting = { translate: (message: Parameters<typeof translator.translate>[0]) => (translated++, translator.translate(message)) };
  const reader = sseStreamReader(counting, context.maxEventChars, translator.lane);
  const chunk = `data: ${OPENING}${COMMON_RESTS[0]}\n\n`;
  reader.push(Buffer.from(chunk.repeat(100) + 'data: [DONE]\n\n'));
  let frames = '';
  for (let step = reader.next(); step !== undefined; step = reader.next()) frames += step.frames;
  t.equal(frames, `data: ${OPENING.replace('"gpt-4o"', '"mock/gpt-4o"')},"choices":[{"index":0,"delta":{"content":" token"},"finish_reason":null}]}\n\n`.repeat(100) + 'data: [DONE]\n\n');
  t.equal(translated, 2, 'the first chunk (which shows the opening) and [DONE] are translated; the other 99 ride the lane');
});
