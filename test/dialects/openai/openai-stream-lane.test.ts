import t from 'tap';
import type { StreamReader, StreamStep } from '../../../src/dialects/dialect.js';
import { openaiDialect } from '../../../src/dialects/openai/index.js';
import { createOpenAIStreamTranslator } from '../../../src/dialects/openai/stream.js';
import { sseStreamReader } from '../../../src/dialects/sse-stream-reader.js';
import { answerTextChars } from '../../../src/observe/usage-estimate.js';
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
  ',"choices":[{"index":0,"delta":{"content":"\\"model\\": \\u0065rror \\\\","reasoning_content" :  "x"},"finish_reason":null}],"usage":null}',
  ',"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"{\\"usage\\":1}"}}]},"finish_reason":null}]}',
  ',"choices":[{"index":0,"delta":{"content":" é 世界 👋"},"finish_reason":null}],"usage":null}',
  ',"choices":[{"index":0,"delta":{"content":"\\u00e9\\n"},"finish_reason":null}]}',
  ',"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}',
  // The shape of the first with other values, and (below) its end as long but spelled otherwise: the lane takes each as the full check does.
  ',"choices":[{"index":0,"delta":{"content":""},"finish_reason":null}],"usage":null}',
  ',"choices":[{"index":0,"delta":{"content":"a \\"usage"},"finish_reason":null}],"usage":null}',
  ',"choices":[{"index":0,"delta":{"content":"\\u0065rror \\\\"},"finish_reason":null}],"usage":null}',
  ',"choices":[{"index":0,"delta":{"content":"x\\"},\\"finish_reason\\":null}],\\"usage\\":null}"},"finish_reason":null}],"usage":null}',
  ',"choices":[{"index":0,"delta":{"content":"a"model":"leak"},"finish_reason":null}],"usage":null}',
  ',"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}],"usage":null},"usage":null}',
  ',"choices":[{"index":0,"delta":{"content":" é 世界 👋 \\\\\\""},"finish_reason":null}],"usage":null}',
  ',"choices":[{"index":0,"delta":{"content":"t"},"finish_reason":"stop"}],"usage":null}',
  ',"choices":[{"index":0,"delta":{"content":" token"},"finish_reason":"ab"}],"usage":null}',
  ',"choices":[{"index":0,"delta":{"content":" token"},"finish_reason":null}],"error":null}',
  // OpenAI's padding after the usage (stream_options.include_obfuscation), and what only looks like it.
  ',"choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"UrWxwbIG"}',
  ',"choices":[{"index":0,"delta":{"content":"é"},"finish_reason":null}],"usage":null,"obfuscation":""}',
  ',"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}],"usage":null,"obfuscation":"a\\"b"}',
  ',"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}],"usage":null,"obfuscation":"\\u0075sage"}',
  ',"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}],"usage":null,"obfuscation":"a","model":"leak"}',
  ',"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}],"usage":null,"obfuscation":"a"},"usage":null}',
  ',"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}],"usage":null,"padding":"a"}',
];
const ODD_RESTS = [
  ',"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}',
  ',"error":{"message":"boom"}}',
  'model":"leak"}',
  ',"x":"\\u006dodel"}',
  ',"usage":null,"usage":null}',
  ',"choices":[{"delta":{"content":"a"model":"x"}}]}',
  ',"choices":[{"delta":{"content":"unclosed}]}',
  ',"choices":[{"delta":{"content":"a\\"}]}',
  ':"text":"x"}',
  ',"choices":[{"delta":{"refusal":\t"no","text":"b"content":"c"}}]}',
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
    else if (roll < 0.955) text += `data: ${OPENING}${lineEnd}data: ${pick(COMMON_RESTS)}${lineEnd}${lineEnd}`;
    else if (roll < 0.97) text += `data: ${OPENING}${pick(COMMON_RESTS)}${lineEnd}data: ${pick(COMMON_RESTS)}${lineEnd}${lineEnd}`;
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

/** Steps whose textChars is not what the engine's own count (answerTextChars) finds in their frames. */
const miscounted: string[] = [];
let countedSteps = 0;

interface Relayed {
  readonly frames: string;
  /** What the span would say of the stream (describe()): its finish reasons, its first id and model. */
  readonly described?: string;
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
        if (step.textChars !== undefined) {
          countedSteps++;
          if (step.textChars !== answerTextChars(step.frames)) miscounted.push(`${step.textChars}: ${step.frames.slice(0, 300)}`);
        }
        if (step.usage) usages.push(JSON.stringify(step.usage));
        if (step.end) return { frames, usages, end: step.end, described: JSON.stringify(reader.describe?.()) };
      }
    }
    reader.end();
  } catch (error) {
    return { frames, usages, end: undefined, error: (error as Error).name, described: JSON.stringify(reader.describe?.()) };
  }
  return { frames, usages, end: undefined, described: JSON.stringify(reader.describe?.()) };
}

// described false: an untraced stream, whose finish reasons ride the lane too (nothing notes them).
for (const [hideUsage, described] of [[true, true], [false, true], [true, false]] as const) {
  t.test(`${STREAMS} mixed streams cut at random, hideUsage ${hideUsage}, described ${described}: the lane changes nothing the caller gets`, async (t) => {
    const random = seededRandom(0x13_03 + Number(hideUsage) + 2 * Number(described));
    const hostile = createEventGenerator(0x13_04);
    const maxEventChars = 300;
    const context = { routingModel: 'mock/gpt-4o', providerId: 'mock', hideUsage, includeUsage: false, maxEventChars, described };
    let differences = 0;
    let laneFrames = 0;
    countedSteps = 0;
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
    t.same(miscounted.slice(0, 3), [], 'every answer text count a step carries is the one the engine would make');
    t.ok(countedSteps > STREAMS, `steps that carry their count: ${countedSteps}`);
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

t.test("OpenAI's chunks padded after their usage (include_obfuscation) ride the lane: usage hidden, padding kept", async (t) => {
  // As OpenAI streams once usage is asked for: every chunk ends `"usage":null,"obfuscation":"…"` (2026).
  const opening = '{"id":"chatcmpl-C","object":"chat.completion.chunk","created":1764075745,"model":"gpt-4.1-mini-2025-04-14","service_tier":"default"';
  const padded = (i: number) => `${opening},"system_fingerprint":"fp_24710c7f06","choices":[{"index":0,"delta":{"content":" t${i}"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"${'UrWxwbIG'.slice(0, i % 9)}"}`;
  const usage = '{"prompt_tokens":5,"completion_tokens":100,"total_tokens":105}';
  const chunks = Array.from({ length: 100 }, (_, i) => padded(i));
  const text = `${chunks.map((chunk) => `data: ${chunk}\n\n`).join('')}data: ${opening},"choices":[],"usage":${usage},"obfuscation":"ab"}\n\ndata: [DONE]\n\n`;
  for (const hideUsage of [true, false]) {
    const context = { routingModel: 'openai/gpt-4.1-mini', providerId: 'openai', hideUsage, includeUsage: !hideUsage, maxEventChars: 1 << 20 };
    const translator = createOpenAIStreamTranslator(context);
    let translated = 0;
    const counting = { translate: (message: Parameters<typeof translator.translate>[0]) => (translated++, translator.translate(message)) };
    const reader = sseStreamReader(counting, context.maxEventChars, translator.lane);
    reader.push(Buffer.from(text));
    let frames = '';
    let reported;
    for (let step = reader.next(); step !== undefined; step = reader.next()) {
      frames += step.frames;
      reported = step.usage ?? reported;
    }
    const relayed = chunks.map((chunk) => chunk.replace('"gpt-4.1-mini-2025-04-14"', '"openai/gpt-4.1-mini"'));
    const usageChunk = hideUsage ? '' : `data: ${opening.replace('"gpt-4.1-mini-2025-04-14"', '"openai/gpt-4.1-mini"')},"choices":[],"usage":${usage},"obfuscation":"ab"}\n\n`;
    const want = relayed.map((chunk) => `data: ${hideUsage ? chunk.replace(',"usage":null', '') : chunk}\n\n`).join('') + usageChunk + 'data: [DONE]\n\n';
    t.equal(frames, want, `hideUsage ${hideUsage}: each chunk as the full scan gives it`);
    t.same(reported, JSON.parse(usage), `hideUsage ${hideUsage}: the usage counted`);
    t.equal(translated, 3, `hideUsage ${hideUsage}: the first chunk, the usage chunk and [DONE] are translated; the other 99 ride the lane`);
  }
});

t.test('a count is carried only where it is exact: text before the model, a routing model named like a text field', async (t) => {
  const cases = [
    { routingModel: 'text', opening: OPENING, rest: ':"x","content":"yy"}' },
    { routingModel: 'text', opening: OPENING, rest: ',"choices":[{"delta":{"content":"yy"}}]}' },
    { routingModel: 'mock/gpt-4o', opening: '{"choices":[{"delta":{"content":"abc"}}],"model":"gpt-4o"', rest: ',"id":"x"}' },
  ];
  for (const { routingModel, opening, rest } of cases) {
    const context = { routingModel, providerId: 'mock', hideUsage: false, includeUsage: false, maxEventChars: 1 << 20 };
    const reader = openaiDialect.createStreamReader(context);
    reader.push(Buffer.from(`data: ${opening}${rest}\n\n`.repeat(5)));
    let counted = 0;
    for (let step = reader.next(); step !== undefined; step = reader.next()) {
      if (step.textChars === undefined) continue;
      counted++;
      t.equal(step.textChars, answerTextChars(step.frames), `${routingModel}, ${rest}: the count the engine would make`);
    }
    t.ok(counted > 0 || rest.startsWith(':') || opening.startsWith('{"choices"'), `${routingModel}, ${rest}: counted where exact (${counted} steps)`);
  }
});

t.test('finish reasons are noted from the chunks the lane takes, once each, and only for a stream that is described', async (t) => {
  const finishing = (reasons: readonly string[]) =>
    `data: ${OPENING},"choices":[${reasons.map((reason, index) => `{"index":${index},"delta":{},"finish_reason":"${reason}"}`).join(',')}],"usage":null}\n\n`;
  const text = `data: ${OPENING}${COMMON_RESTS[0]}\n\n`.repeat(3) + finishing(['stop', 'length']) + `data: ${OPENING},"error":{"message":"x"},"choices":[{"finish_reason":"late"}]}\n\n`;
  const relayedBy = (described: boolean) => {
    const context = { routingModel: 'mock/gpt-4o', providerId: 'mock', hideUsage: true, includeUsage: false, maxEventChars: 1 << 20, described };
    const reader = openaiDialect.createStreamReader(context);
    reader.push(Buffer.from(text));
    let frames = '';
    for (let step = reader.next(); step !== undefined; step = reader.next()) frames += step.frames;
    return { frames, described: reader.describe?.() };
  };
  const traced = relayedBy(true);
  const untraced = relayedBy(false);
  // The error chunk is not common: translate notes its finish reason, and the lane has noted none of it before.
  t.same(traced.described?.finishReasons, ['stop', 'length', 'late'], 'each finish reason once, in order');
  t.same(untraced.described?.finishReasons, [], 'an untraced stream gathers none');
  t.equal(untraced.frames, traced.frames, 'the caller gets the same either way');
});

t.test('an event of 40,000 escaped text values is walked once: counted exactly, and in one pass', async (t) => {
  // A search that ran past each value to the end of the event made this quadratic (two minutes on a 2-core VM
  // before the walk was bounded by the value); tap's timeout is the bound here, the pass takes ~0.1 s.
  const values = Array.from({ length: 40_000 }, () => '"content":"a\\nb"').join(',');
  const text = `data: ${OPENING},"choices":[]}\n\n` + `data: ${OPENING},"choices":[{"delta":{${values}}}]}\n\n`.repeat(3) + 'data: [DONE]\n\n';
  const context = { routingModel: 'mock/gpt-4o', providerId: 'mock', hideUsage: false, includeUsage: false, maxEventChars: 8 << 20, described: false };
  const reader = openaiDialect.createStreamReader(context);
  reader.push(Buffer.from(text));
  let counted = 0;
  let scanned = 0;
  for (let step = reader.next(); step !== undefined; step = reader.next()) {
    counted += step.textChars ?? 0;
    scanned += step.textChars === undefined ? 0 : answerTextChars(step.frames);
  }
  t.equal(counted, 3 * 40_000 * 4, 'every value counted by the lane');
  t.equal(counted, scanned, 'as the engine would count them');
});
