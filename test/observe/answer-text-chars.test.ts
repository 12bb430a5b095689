// answerTextChars finds a text field's key looking behind from its `":` (cheaper than trying every key at every
// quote), and must count exactly what the search from the key's opening quote counted: on JSON, and on whatever
// else a provider sends (the count is what a caller is charged when no usage comes).
import t from 'tap';
import { answerTextChars } from '../../src/observe/usage-estimate.js';

/** The count as it was written before the look-behind: the search from the key's opening quote. */
function countFromOpeningQuote(json: string): number {
  const field = /"(?:content|reasoning_content|reasoning|refusal|arguments|text|thinking|partial_json|delta)":\s*"/g;
  let chars = 0;
  while (field.test(json)) {
    const start = field.lastIndex;
    let at = start;
    for (; at < json.length; at++) {
      if (json[at] === '\\') at++;
      else if (json[at] === '"') break;
    }
    chars += Math.min(at, json.length) - start;
    field.lastIndex = at + 1;
  }
  return chars;
}

t.test('events of every inbound format: the text values, as written', async (t) => {
  const cases: [string, number][] = [
    ['data: {"id":"c","choices":[{"index":0,"delta":{"content":" token3"},"finish_reason":null}]}\n\n', 7],
    ['{"choices":[{"message":{"role":"assistant","content": "spaced","refusal":null}}]}', 6],
    ['{"delta":{"reasoning_content":"why","content":"so"}}', 5],
    ['event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"type":"thinking_delta","thinking":"hm"}}\n\n', 2],
    ['{"delta":{"type":"input_json_delta","partial_json":"{\\"a\\":"}}', 7],
    ['{"type":"response.output_text.delta","delta":"abcd"}', 4],
    ['{"content":"say \\"content\\":\\"x\\" twice"}', 27],
    ['{"content":"cut', 3],
    ['{"content":"ends in a backslash\\', 20],
  ];
  for (const [json, chars] of cases) {
    t.equal(answerTextChars(json), chars, json);
    t.equal(countFromOpeningQuote(json), chars, `as before: ${json}`);
  }
});

t.test('not JSON: a value closed by the quote a key seems to open counts only what a search from the quote finds', async (t) => {
  // Looking behind from `":"b"`, `"content` starts at the quote that closed "a": a search from the key's own
  // opening quote never sees it, and the count stays what it was.
  t.equal(answerTextChars('{"text":"a"content":"b"}'), 1);
  t.equal(answerTextChars('{"text":"a"content":"b","delta":"cd"}'), 3, 'and the next field still counts');
  t.equal(answerTextChars('{"text":"a"xcontent":"b"}'), 1);
  // "b" is no value the count read (its key has no opening quote), so the quote after it opens the key of "c".
  t.equal(answerTextChars('"text":"a"text":"b"text":"c"'), 2);
});

t.test('on generated text built of keys, quotes, escapes and spaces, the count is the one searched from the quote', async (t) => {
  const pieces = ['"content"', '"text"', '"reasoning_content"', '"delta"', 'content', 'text', '_content', '"', ':', ': ', '"', '\\', '\\"', ',', '{', '}', ' ', '\n', 'a', 'ж', '😀', '"x"', 'reasoning'];
  // xorshift32: the same texts on every run.
  let state = 2_463_534_242;
  const random = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  let differing = 0;
  let first = '';
  for (let round = 0; round < 20_000; round++) {
    let json = '';
    const length = 1 + (random() % 40);
    for (let i = 0; i < length; i++) json += pieces[random() % pieces.length];
    if (answerTextChars(json) !== countFromOpeningQuote(json)) {
      differing++;
      first ||= json;
    }
  }
  t.equal(differing, 0, `generated texts counted differently (the first: ${JSON.stringify(first)})`);
});
