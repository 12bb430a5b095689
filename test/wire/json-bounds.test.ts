import t from 'tap';
import { JsonBoundsScanner, plainKeyAt, type JsonBoundsViolation } from '../../src/wire/json-bounds.js';

const UNBOUNDED = { maxDepth: 1e9, maxValues: 1e9 };

/** Scans `text` cut into pieces at the given byte offsets. */
function scan(text: string, cuts: readonly number[] = [], bounds = UNBOUNDED) {
  const bytes = Buffer.from(text);
  const scanner = new JsonBoundsScanner(bounds);
  let from = 0;
  let violation: JsonBoundsViolation | undefined;
  for (const to of [...cuts, bytes.length]) {
    violation = scanner.feed(bytes.subarray(from, to));
    if (violation) break;
    from = to;
  }
  return { values: scanner.values, violation, bytes };
}

/** What JSON.parse builds: values (keys not counted) and nesting depth. */
function measure(value: unknown, depth = 0): { values: number; depth: number } {
  if (value === null || typeof value !== 'object') return { values: 1, depth };
  const children = Array.isArray(value) ? value : Object.values(value);
  let values = 1;
  let deepest = depth + 1;
  for (const child of children) {
    const inner = measure(child, depth + 1);
    values += inner.values;
    deepest = Math.max(deepest, inner.depth);
  }
  return { values, depth: deepest };
}

/** A random JSON text with strings full of what could fool a scanner: quotes, backslashes, brackets, commas, UTF-8. */
function randomJson(random: () => number, depth = 0): string {
  const pick = random();
  const strings = ['', 'a', '\\"', '\\\\', '\\\\\\"', '[{,}]', ',,,', 'ж', '😀', '\\u0022', 'x\\n', '"', '{"a":[1,2]}'];
  const aString = (prefix = '') => JSON.stringify(prefix + strings.slice(0, 1 + Math.floor(random() * strings.length)).join(random() < 0.5 ? '' : '\\'));
  if (depth > 6 || pick < 0.35) {
    const scalars = ['0', '-1.5e3', 'true', 'false', 'null', aString()];
    return scalars[Math.floor(random() * scalars.length)]!;
  }
  const count = Math.floor(random() * 5);
  const space = () => [' ', '', '\n', '\t '][Math.floor(random() * 4)]!;
  if (pick < 0.65) return `[${space()}${Array.from({ length: count }, () => randomJson(random, depth + 1)).join(`,${space()}`)}${space()}]`;
  // Distinct keys: JSON.parse keeps only the last of duplicates, and the test compares against what it builds.
  return `{${Array.from({ length: count }, (_, i) => `${space()}${aString(String(i))}${space()}:${randomJson(random, depth + 1)}`).join(',')}}`;
}

function seeded(seed: number): () => number {
  return () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
}

t.test('on generated JSON, the value count bounds what JSON.parse builds, and is the same however the bytes are cut', async (t) => {
  const random = seeded(42);
  for (let round = 0; round < 3000; round++) {
    const text = randomJson(random);
    const truth = measure(JSON.parse(text));
    const whole = scan(text);
    const bytes = Buffer.byteLength(text);
    // Cut anywhere, including inside escapes and inside UTF-8 characters.
    const cuts = Array.from({ length: 1 + Math.floor(random() * 4) }, () => Math.floor(random() * bytes)).sort((a, b) => a - b);
    const pieces = scan(text, cuts);
    if (whole.values < truth.values || pieces.values !== whole.values) {
      t.fail(`round ${round}: ${text} counted ${whole.values} / ${pieces.values} (cut at ${cuts.join(',')}), built ${truth.values}`);
      return;
    }
    // The depth bound is exact: one level less than the text's depth is refused, the depth itself passes.
    if (truth.depth > 0) {
      const refused = scan(text, cuts, { maxDepth: truth.depth - 1, maxValues: 1e9 }).violation;
      const passed = scan(text, cuts, { maxDepth: truth.depth, maxValues: 1e9 }).violation;
      if (refused?.bound !== 'depth' || passed !== undefined) {
        t.fail(`round ${round}: depth ${truth.depth} of ${text} misjudged`);
        return;
      }
    }
  }
  t.pass('3000 generated texts');
});

t.test('counts exactly for plain shapes; only empty containers are counted one over', async (t) => {
  t.equal(scan('[0,0,0]').values, 4);
  t.equal(scan('{"a":1,"b":[true,null]}').values, 5, 'keys are not values');
  t.equal(scan('"a,[{b"').values, 1, 'structure inside a string does not count');
  t.equal(scan('[{},{}]').values, 5, 'an empty container counts one more than it builds');
});

t.test('refuses at the first value or level over a bound, naming the top-level key it was in', async (t) => {
  const body = `{"model":"m","messages":[${'{},'.repeat(100)}{}]}`;
  const tooMany = scan(body, [], { maxDepth: 10, maxValues: 50 });
  t.equal(tooMany.violation?.bound, 'values');
  const span = tooMany.violation!.keySpan!;
  t.equal(plainKeyAt(tooMany.bytes, span.start, span.end), 'messages');

  const deep = scan(`{"model":"m","tools":${'['.repeat(20)}${']'.repeat(20)}}`, [3, 17, 18], { maxDepth: 8, maxValues: 1e9 });
  t.equal(deep.violation?.bound, 'depth');
  t.equal(plainKeyAt(deep.bytes, deep.violation!.keySpan!.start, deep.violation!.keySpan!.end), 'tools');

  const topArray = scan(`[${'[],'.repeat(100)}[]]`, [], { maxDepth: 10, maxValues: 50 });
  t.equal(topArray.violation?.bound, 'values');
  t.equal(topArray.violation?.keySpan, undefined, 'no key when the body is not an object');
});

t.test('a key is named only when it looks like a parameter name', async (t) => {
  for (const key of ['mess\\u0061ges', 'a b', 'x'.repeat(65), 'ключ', '']) {
    const text = `{"${key}":[[[[1]]]]}`;
    const { violation, bytes } = scan(text, [], { maxDepth: 2, maxValues: 1e9 });
    const name = violation?.keySpan && plainKeyAt(bytes, violation.keySpan.start, violation.keySpan.end);
    t.equal(name, undefined, JSON.stringify(key));
  }
});
