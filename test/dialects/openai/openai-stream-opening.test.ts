import t, { type Test } from 'tap';
import { createOpenAIStreamTranslator } from '../../../src/dialects/openai/stream.js';
import type { StreamStep } from '../../../src/dialects/dialect.js';
import { createEventGenerator, seededRandom } from './hostile-events.js';

// The translator remembers the opening (up to model's value) of the last common chunk and checks only the
// rest of a chunk that opens alike. Whatever the rest, a stream's translator must answer exactly what a
// fresh translator answers for the same event (its output is held to JSON.parse's reading by the
// differential test): this drives long-lived translators with events that open alike and end in hostile ways.

const ROUTING_MODEL = 'mock/gpt-4o';
const EVENTS = 6000;

const OPENINGS = [
  '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763700000,"model":"gpt-4o-2024-11-20"',
  '{"model":"m"',
  '{ "id" : "a\\"b\\\\" ,\n"model" :"x"',
  '{"id":"é 世界","model":"llama3.2"',
  '{"id":"c","model":7',
];
// Rests that end an event after an opening: healthy ones, and every way a key can hide after the boundary.
const RESTS = [
  '}',
  ',"choices":[{"index":0,"delta":{"content":" hi"},"finish_reason":null}]}',
  ',"choices":[{"index":0,"delta":{"content":" hi"},"finish_reason":null}],"usage":null}',
  ',"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}',
  ',"usage":null}',
  ',"usage":null} ',
  ',"usage":null,"usage":null}',
  ',"usage":{"prompt_tokens":1},"usage":null}',
  ',"usage":null,"x":1}',
  ',"usage":null,"obfuscation":"UrWxwbIG"}',
  ',"usage":null,"obfuscation":"a\\"b"}',
  ',"usage":null,"obfuscation":"a","usage":null}',
  ',"usage":null,"obfuscation":"}',
  'model":"leak"}',
  ',"model":"leak"}',
  ',"mod\\u0065l":"leak"}',
  ',"x":"\\u006dodel"}',
  ',"c":"\\u00e9 \\u2028"}',
  ',"error":{"message":"boom","code":"x"}}',
  ',"error":null}',
  ',"\\u0065rror":{"message":"boom"}}',
  ',"choices":[{"delta":{"content":"\\"model\\": \\"error\\" usage"}}]}',
  ',"choices":[{"delta":{"content":"line\\nbreak"}}]}',
  ',"nested":{"model":"inner","usage":null}}',
  ', broken',
  '',
  // Text values the one pass steps over, where a fresh translator's search still finds a key or an escape; the bad
  // escape in "cho\ces" makes the fresh translator relay the event untouched, so a miss would show.
  ',"cho\\ces":[{"delta":{"content":"usage"}}]}',
  ',"cho\\ces":[{"delta":{"content":"x \\"error"}}]}',
  ',"cho\\ces":[{"delta":{"content":"\\u0065"}}]}',
  ',"cho\\ces":[{"delta":{"content":"a\\\\u0065"}}]}',
  ',"cho\\ces":[{"delta":{"content":"a\\\\\\u0065"}}]}',
  ',"cho\\ces":[{"delta":{"content":"x","refusal":"\\u00e9"}}]}',
];

function sameStep(t: Test, got: StreamStep, want: StreamStep, data: string): boolean {
  const same = got.frames === want.frames && got.end === want.end && JSON.stringify(got.usage) === JSON.stringify(want.usage);
  if (!same) t.fail(`differs from a fresh translator for ${JSON.stringify(data).slice(0, 200)}: ${JSON.stringify(got).slice(0, 200)} vs ${JSON.stringify(want).slice(0, 200)}`);
  return same;
}

for (const hideUsage of [false, true]) {
  t.test(`${EVENTS} events opening alike, hideUsage ${hideUsage}: the same answer as a fresh translator`, async (t) => {
    const random = seededRandom(0x13_01 + Number(hideUsage));
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const hostile = createEventGenerator(0x13_02);
    const context = { routingModel: ROUTING_MODEL, providerId: 'mock', hideUsage, includeUsage: false };
    const stream = createOpenAIStreamTranslator(context);
    let opening = pick(OPENINGS);
    let differences = 0;
    let tookOpening = 0;
    for (let i = 0; i < EVENTS && differences < 5; i++) {
      if (random() < 0.02) opening = pick(OPENINGS);
      const roll = random();
      // Mostly the opening with a rest; some whole hostile events (which may leave another opening behind);
      // some hostile objects spliced after the opening.
      const other = hostile().data;
      const data = roll < 0.6 ? opening + pick(RESTS) : roll < 0.8 ? other : opening + (other.startsWith('{') ? `,${other.slice(1)}` : other);
      const message = { kind: 'event' as const, event: undefined, data, id: undefined };
      const got = stream.translate(message);
      const want = createOpenAIStreamTranslator(context).translate(message);
      if (!sameStep(t, got, want, data)) differences++;
      if (data.startsWith(opening) && want.frames.includes(ROUTING_MODEL)) tookOpening++;
    }
    t.equal(differences, 0, 'no event translated differently');
    t.ok(tookOpening > EVENTS / 4, `events that open alike and are relayed: ${tookOpening}`);
  });
}

t.test('a chunk that opens alike but names model again after the boundary is not taken as common', async (t) => {
  const stream = createOpenAIStreamTranslator({ routingModel: ROUTING_MODEL, providerId: 'mock', hideUsage: false, includeUsage: false });
  const opening = '{"id":"c","model":"gpt-4o"';
  t.equal(stream.translate({ kind: 'event', event: undefined, data: `${opening}}`, id: undefined }).frames, `data: {"id":"c","model":"${ROUTING_MODEL}"}\n\n`);
  // "gpt-4o"model"… : the closing quote of the value opens a second "model" (not JSON; passed through as it came).
  const smuggled = `${opening}model":"leak"}`;
  t.equal(stream.translate({ kind: 'event', event: undefined, data: smuggled, id: undefined }).frames, `data: ${smuggled}\n\n`);
});
