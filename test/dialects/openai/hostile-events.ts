/**
 * A seeded, deterministic generator of hostile stream events for differential tests: JSON objects whose
 * keys are spelled with `\u` escapes, duplicated, nested, surrounded by odd whitespace, with strings that
 * hold key-like text, plus OpenAI chunks with a key smuggled in, non-objects, and broken variants.
 */

/** A top-level entry as generated: the key as a JSON parser reads it, and the value's JSON text. */
export interface GeneratedEntry {
  readonly key: string;
  readonly valueText: string;
}

export interface GeneratedEvent {
  readonly data: string;
  readonly kind: 'object' | 'chunk' | 'not-object' | 'bad-first-key' | 'broken';
  /** For `object` and `chunk`: every top-level entry, duplicates included, in order. */
  readonly entries?: readonly GeneratedEntry[];
  /** Some key is written with an escape that decodes to model, error or usage. */
  readonly escapedKeyThatMatters?: boolean;
}

/** mulberry32: small, fast, and the same sequence on every machine. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
}

const KEYS_THAT_MATTER = ['model', 'error', 'usage'];
const OTHER_KEYS = ['choices', 'id', 'object', 'created', 'system_fingerprint', 'Model', 'models', 'usage_', 'err', 'x', ''];
const TRICKY_STRINGS = [
  'model',
  'error',
  'usage',
  '"model":"gpt-leak"',
  ',"usage":null}',
  '{"error":{"message":"x"}}',
  'mod\\u0065l',
  '\\u0065rror',
  '\\',
  '"',
  'é 世界 👋',
  '\u2028',
  'line\nbreak',
  'say "model": x',
];
const NUMBERS = ['0', '-0', '1.0', '1e5', '12345678901234567890', '-3.25E-2'];
const SPACES = ['', '', '', '', ' ', '\n', '\t', ' \n\t '];
const USAGE_OBJECT = '{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}';

export function createEventGenerator(seed: number): () => GeneratedEvent {
  const random = seededRandom(seed);
  const chance = (p: number) => random() < p;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const ws = () => pick(SPACES);

  /** A JSON string literal for `text`, each character escaped as `\uXXXX` (either hex case) now and then. */
  const spell = (text: string, escapeRate: number): { literal: string; escaped: boolean } => {
    let escaped = false;
    let literal = '"';
    for (const char of text) {
      const code = char.charCodeAt(0);
      if (char.length === 1 && chance(escapeRate)) {
        const hex = code.toString(16).padStart(4, '0');
        literal += `\\u${chance(0.5) ? hex : hex.toUpperCase()}`;
        escaped = true;
      } else literal += JSON.stringify(char).slice(1, -1);
    }
    return { literal: `${literal}"`, escaped };
  };

  const value = (depth: number): string => {
    const roll = random();
    if (depth > 3 || roll < 0.3) return pick([spell(pick(TRICKY_STRINGS), 0.1).literal, pick(NUMBERS), 'true', 'false', 'null']);
    if (roll < 0.36 && depth === 0) {
      // Nesting far deeper than any real chunk, yet shallow enough for util.isDeepStrictEqual, which recurses:
      // at 1,500 it overflowed the stack in about one run of four under tap. Deeper nesting has its own tests.
      const n = 1 + Math.floor(random() * 400);
      return chance(0.5) ? '['.repeat(n) + ']'.repeat(n) : '{"model":'.repeat(n) + '"deep"' + '}'.repeat(n);
    }
    if (roll < 0.7) {
      const members = Array.from({ length: Math.floor(random() * 4) }, () => {
        const key = spell(pick([...KEYS_THAT_MATTER, ...OTHER_KEYS]), 0.2).literal;
        return `${ws()}${key}${ws()}:${ws()}${value(depth + 1)}${ws()}`;
      });
      return `{${members.join(',')}${members.length === 0 ? ws() : ''}}`;
    }
    const items = Array.from({ length: Math.floor(random() * 4) }, () => `${ws()}${value(depth + 1)}${ws()}`);
    return `[${items.join(',')}${items.length === 0 ? ws() : ''}]`;
  };

  const valueFor = (key: string): string => {
    if (key === 'model') return chance(0.8) ? '"gpt-4o-2024-11-20"' : value(1);
    if (key === 'error') return chance(0.4) ? 'null' : pick(['{"message":"boom","code":"server_busy"}', '"boom"', '502', 'false', '[]', value(1)]);
    if (key === 'usage') return chance(0.4) ? 'null' : chance(0.7) ? USAGE_OBJECT : value(1);
    if (key === 'choices') return chance(0.4) ? '[]' : `[{"index":0,"delta":{"content":${spell(pick(TRICKY_STRINGS), 0.1).literal}},"extra":${value(1)}}]`;
    return value(0);
  };

  const join = (members: readonly string[]) => `${ws()}{${members.length === 0 ? ws() : members.join(',')}}${ws()}`;

  const object = (): GeneratedEvent => {
    const entries: GeneratedEntry[] = [];
    const members: string[] = [];
    let escapedKeyThatMatters = false;
    for (let count = Math.floor(random() * 8); count > 0; count--) {
      const key = chance(0.55) ? pick(KEYS_THAT_MATTER) : pick(OTHER_KEYS);
      const spelled = spell(key, chance(0.4) ? 0.35 : 0);
      if (spelled.escaped && KEYS_THAT_MATTER.includes(key)) escapedKeyThatMatters = true;
      const valueText = valueFor(key);
      entries.push({ key, valueText });
      members.push(`${ws()}${spelled.literal}${ws()}:${ws()}${valueText}${ws()}`);
    }
    return { data: join(members), kind: 'object', entries, escapedKeyThatMatters };
  };

  /** An OpenAI chunk as a provider sends it, now and then with one more entry slipped in anywhere. */
  const chunk = (): GeneratedEvent => {
    const content = spell(pick(TRICKY_STRINGS), chance(0.2) ? 0.2 : 0).literal;
    const entries: GeneratedEntry[] = [
      { key: 'id', valueText: '"chatcmpl-1"' },
      { key: 'object', valueText: '"chat.completion.chunk"' },
      { key: 'created', valueText: '1763700000' },
      { key: 'model', valueText: '"gpt-4o-2024-11-20"' },
      { key: 'choices', valueText: `[{"index":0,"delta":{"content":${content}},"logprobs":null,"finish_reason":null}]` },
    ];
    // OpenAI's last chunk when usage is asked for: no choices, the usage closing it.
    const usageOnly = chance(0.2);
    if (usageOnly) entries[4] = { key: 'choices', valueText: '[]' };
    const literals = entries.map((entry) => JSON.stringify(entry.key));
    const smuggled: [string, string, string][] = [
      ['model', '"mod\\u0065l"', '"gpt-leak"'],
      ['model', '"\\u006D\\u006F\\u0064\\u0065\\u006C"', '"gpt-leak"'],
      ['model', '"model"', '"gpt-duplicate"'],
      ['error', '"\\u0065rror"', '{"message":"smuggled"}'],
      ['error', '"error"', 'null'],
      ['error', '"err\\u006fr"', 'null'],
      ['usage', '"us\\u0061ge"', USAGE_OBJECT],
      ['usage', '"usage"', USAGE_OBJECT],
      ['usage', '"\\u0075sage"', 'null'],
    ];
    let escapedKeyThatMatters = false;
    if (chance(0.6)) {
      const [key, literal, valueText] = pick(smuggled);
      const at = Math.floor(random() * (entries.length + 1));
      entries.splice(at, 0, { key, valueText });
      literals.splice(at, 0, literal);
      escapedKeyThatMatters = literal.includes('\\');
    }
    if (usageOnly || chance(0.5)) {
      entries.push({ key: 'usage', valueText: usageOnly ? USAGE_OBJECT : 'null' });
      literals.push('"usage"');
    }
    // OpenAI's padding after everything (stream_options.include_obfuscation), now and then spelled to mislead.
    if (chance(0.3)) {
      entries.push({ key: 'obfuscation', valueText: pick(['"UrWxwbIG"', '""', '"a\\"b"', '"\\u0075sage"', '"x\\\\"', '"}"', '7']) });
      literals.push('"obfuscation"');
    }
    const data = `{${entries.map((entry, i) => `${literals[i]}:${entry.valueText}`).join(',')}}`;
    return { data, kind: 'chunk', entries, escapedKeyThatMatters };
  };

  return () => {
    const roll = random();
    if (roll < 0.45) return object();
    if (roll < 0.75) return chunk();
    if (roll < 0.8) return { data: pick(['[{"model":"x"}]', '"model"', '42', 'null', 'true', 'not json', '[DONE ]', '[]']), kind: 'not-object' };
    const base = chance(0.5) ? object().data : chunk().data;
    if (roll < 0.87) {
      // A key with an escape JSON does not have, opening the object (issue 10, item 7).
      const badKey = pick(['"\\x"', '"\\u12G4"', "\"\\'\"", '"mod\\el"', '"\\U0041"']);
      return { data: base.replace('{', `{${badKey}:1,`), kind: 'bad-first-key' };
    }
    const at = Math.floor(random() * base.length);
    const broken = pick([
      () => base.slice(0, at),
      () => base.slice(0, at) + pick(['"', '\\', '{', '}', ',', ':', '[', 'x']) + base.slice(at + 1),
      () => base + pick(['}', ' x', ',"usage":null}']),
    ])();
    return { data: broken, kind: 'broken' };
  };
}
