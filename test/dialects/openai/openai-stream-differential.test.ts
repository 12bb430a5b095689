import { isDeepStrictEqual } from 'node:util';
import t from 'tap';
import { createOpenAIStreamTranslator } from '../../../src/dialects/openai/stream.js';
import { SseParser } from '../../../src/wire/sse-parser.js';
import { createEventGenerator, type GeneratedEvent } from './hostile-events.js';

// Differential test of the stream translator against JSON.parse: whatever the provider sends, what a JSON
// parser reads from what the caller receives has the routing model, no hidden usage, and no unnoticed error.

const ROUTING_MODEL = 'mock/gpt-4o';
const EVENTS = 6000;
const SEED = 0x10_05;

type Json = Record<string, unknown>;

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The data of each event in `frames`, read back as the caller's SSE parser reads it. */
function callerEvents(frames: string): string[] {
  return new SseParser(1 << 26).push(Buffer.from(frames)).flatMap((message) => (message.kind === 'event' ? [message.data] : []));
}

function without(object: Json, keys: readonly string[]): Json {
  return Object.fromEntries(Object.entries(object).filter(([key]) => !keys.includes(key)));
}

/** Every way the caller's view of one event can break the contract; empty when it holds. */
function violations(event: GeneratedEvent, hideUsage: boolean): string[] {
  const problems: string[] = [];
  const translator = createOpenAIStreamTranslator({ routingModel: ROUTING_MODEL, providerId: 'mock', hideUsage, includeUsage: false });
  let step;
  try {
    step = translator.translate({ kind: 'event', event: undefined, data: event.data, id: undefined });
  } catch (error) {
    return [`threw ${String(error)}`];
  }
  const input = parse(event.data);
  const isError = event.entries?.some((entry) => entry.key === 'error' && entry.valueText !== 'null');
  const received = callerEvents(step.frames);
  if (step.end === 'error') {
    if (isError === false) problems.push('ended as an error without a non-null top-level error');
    const envelope = received.length === 1 ? parse(received[0]!) : undefined;
    if (!isObject(envelope) || !isObject(envelope['error']) || envelope['error']['gateway_code'] !== 'provider_stream_error') problems.push('error end without the envelope');
    return problems;
  }
  if (isError) problems.push('a non-null top-level error was not treated as an error');
  if (received.length === 0) {
    if (event.data === '') return problems; // an event with empty data carries nothing to relay
    const usageOnly = input === undefined || (isObject(input) && isDeepStrictEqual(input['choices'], []));
    if (!(hideUsage && isObject(step.usage) && usageOnly)) problems.push('dropped an event that is not the hidden usage-only chunk');
    return problems;
  }
  if (received.length > 1) problems.push(`one event became ${received.length}`);
  const output = parse(received[0]!);
  if (isObject(output)) {
    if (output['model'] !== ROUTING_MODEL) problems.push(`the caller reads model ${JSON.stringify(output['model'])}`);
    if (hideUsage && Object.hasOwn(output, 'usage')) problems.push('the caller reads usage it did not ask for');
    if (output['error'] !== undefined && output['error'] !== null) problems.push('the caller reads an error the stream did not end on');
  }
  if (isObject(input)) {
    if (!isObject(output)) problems.push('a JSON object became something else');
    else if (!isDeepStrictEqual(without(output, ['model', 'usage']), without(input, ['model', 'usage']))) problems.push('fields other than model and usage changed');
    else if (!hideUsage && !isDeepStrictEqual(output['usage'], input['usage'])) problems.push('usage the caller asked for changed');
    const counted = isObject(input['usage']) ? input['usage'] : undefined;
    if (!isDeepStrictEqual(step.usage, counted)) problems.push('the usage reported to the engine is not the one a parser reads');
  } else if (input !== undefined || event.kind === 'bad-first-key') {
    // Not a JSON object (item 7: a key with an escape JSON does not have makes the event not JSON): as it came.
    if (received[0] !== event.data) problems.push('an event that is not a JSON object was changed');
  }
  return problems;
}

t.test(`${EVENTS} generated hostile events: the caller reads what the contract says, for JSON.parse`, async (t) => {
  const next = createEventGenerator(SEED);
  const failures: string[] = [];
  const seen = { escapedKeys: 0, duplicates: 0, deep: 0, errors: 0, nullErrors: 0, usageOnly: 0, badFirstKey: 0, broken: 0, notObject: 0, chunks: 0 };
  for (let i = 0; i < EVENTS; i++) {
    const event = next();
    const keys = event.entries?.map((entry) => entry.key) ?? [];
    if (event.escapedKeyThatMatters) seen.escapedKeys++;
    if (new Set(keys).size < keys.length) seen.duplicates++;
    if (event.data.includes('[[[[[[[[[[') || event.data.includes('{"model":{"model":{"model":{"model":')) seen.deep++;
    if (event.entries?.some((entry) => entry.key === 'error' && entry.valueText !== 'null')) seen.errors++;
    if (event.entries?.some((entry) => entry.key === 'error' && entry.valueText === 'null')) seen.nullErrors++;
    if (keys.includes('usage') && event.entries?.some((entry) => entry.key === 'choices' && entry.valueText === '[]')) seen.usageOnly++;
    if (event.kind === 'bad-first-key') seen.badFirstKey++;
    if (event.kind === 'broken') seen.broken++;
    if (event.kind === 'not-object') seen.notObject++;
    if (event.kind === 'chunk') seen.chunks++;
    for (const hideUsage of [false, true]) {
      for (const problem of violations(event, hideUsage)) failures.push(`${problem} (hideUsage ${hideUsage}): ${event.data.slice(0, 300)}`);
    }
  }
  t.same(failures.slice(0, 10), [], `no violation (${failures.length} in all)`);
  // The generator really produced what the property is about.
  for (const [name, count] of Object.entries(seen)) t.ok(count >= 100, `${name}: ${count} events`);
});

t.test('the same seed gives the same events', async (t) => {
  const a = createEventGenerator(7);
  const b = createEventGenerator(7);
  t.same(
    Array.from({ length: 50 }, () => a().data),
    Array.from({ length: 50 }, () => b().data),
  );
});
