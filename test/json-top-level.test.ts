import t from 'tap';
import { editTopLevel, scanTopLevel, setTopLevelString } from '../src/engine/json-top-level.js';

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

t.test('editTopLevel removes and adds keys in one pass, keeping the rest as written', async (t) => {
  const edit = (text: string, edits: [string, string | undefined][]) => editTopLevel(text, scanTopLevel(text)!, new Map(edits));
  t.equal(edit('{"a":1,"usage":null,"b":2}', [['usage', undefined]]), '{"a":1,"b":2}');
  t.equal(edit('{"usage":null, "b":2}', [['usage', undefined]]), '{ "b":2}');
  t.equal(edit('{"a":1,"usage":null}', [['usage', undefined]]), '{"a":1}');
  t.equal(edit('{"usage":null}', [['usage', undefined]]), '{}');
  t.equal(edit('{"usage":1,"usage":2,"x":3}', [['usage', undefined]]), '{"x":3}');
  t.equal(edit('{ "a" : 1 ,\n "b":2 }', [['b', '"B"']]), '{ "a" : 1 ,\n "b":"B" }');
  t.equal(edit('{"a":1}', [['stream_options', '{"include_usage":true}']]), '{"stream_options":{"include_usage":true},"a":1}');
  t.equal(edit('{}', [['k', 'true']]), '{"k":true}');
  t.equal(edit('{"usage":null,"a":1}', [['usage', undefined], ['model', '"m"']]), '{"model":"m","a":1}');
});
