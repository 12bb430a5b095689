import t from 'tap';
import { scanTopLevel, setTopLevelString } from '../src/engine/json-top-level.js';

function rewrite(text: string, value = 'R'): string | undefined {
  const scan = scanTopLevel(text);
  return scan && setTopLevelString(text, scan, 'model', value);
}

t.test('rewrites the top-level model and nothing else', async (t) => {
  t.equal(rewrite('{"model":"a","x":1}'), '{"model":"R","x":1}');
  t.equal(rewrite(' {\n "x" : [ {"model":"inner"} ],\r\n\t"model" : "a" } '), ' {\n "x" : [ {"model":"inner"} ],\r\n\t"model" : "R" } ');
  t.equal(rewrite('{"s":"a \\" } \\\\","model":"a"}'), '{"s":"a \\" } \\\\","model":"R"}', 'escaped quotes and braces inside strings');
  t.equal(rewrite('{"mod\\u0065l":"a"}'), '{"mod\\u0065l":"R"}', 'an escaped key is the same key');
  t.equal(rewrite('{"model":"a","model":"b"}'), '{"model":"R","model":"R"}', 'every duplicate, whichever one a reader keeps');
  t.equal(rewrite('{"model":null}'), '{"model":"R"}');
  t.equal(rewrite('{"model":"a"}', 'quote " and \\ and \u2028'), `{"model":${JSON.stringify('quote " and \\ and \u2028')}}`);
});

t.test('adds model first when absent', async (t) => {
  t.equal(rewrite('{}'), '{"model":"R"}');
  t.equal(rewrite('{"id":"x"}'), '{"model":"R","id":"x"}');
});

t.test('keeps numbers exactly as written', async (t) => {
  const text = '{"seed":12345678901234567890,"t":1.0,"e":1E-7,"z":-0,"model":"a"}';
  t.equal(rewrite(text), text.replace('"model":"a"', '"model":"R"'));
});

t.test('refuses what is not one JSON object', async (t) => {
  for (const text of ['', '[]', '"x"', '1', '{"a":1', '{"a" 1}', '{"a":1}}', '{"a":1} x', '{a:1}', '{"a":}', '{"a":"unterminated}']) {
    t.equal(scanTopLevel(text), undefined, JSON.stringify(text));
  }
});
