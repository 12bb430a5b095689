import t from 'tap';
import { scanArrayAt, scanObjectAt, scanTopLevel, topLevelValueAt } from '../../src/wire/json-top-level.js';
import { editTopLevel, setTopLevel, setTopLevelString } from '../../src/wire/json-top-level-edit.js';

function rewrite(text: string, value = 'R'): string | undefined {
  return setTopLevelString(text, 'model', value);
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
  for (const text of ['', '[]', '"x"', '1', '{"a":1', '{"a" 1}', '{"a":1}}', '{"a":1} x', '{a:1}', '{"a":}', '{"a":"unterminated}', '{"a":1,}', '{,}', '{"model":"a"', '{"model":"a" "b":1}']) {
    t.equal(scanTopLevel(text), undefined, JSON.stringify(text));
    t.equal(rewrite(text), undefined, `rewrite ${JSON.stringify(text)}`);
  }
});

/** Texts the scan reads or refuses: objects of keys that are, nearly are, or spell model, with values of every kind; every third one cut or bent. */
function bentTexts(): string[] {
  const texts = [
    '{}', ' { } ', '{"model":1}', '{ "model" : "a" , "model":{"model":2} }', '{"mod\\u0065l":"a","model":"b"}', '{"\\u006dodel":[]}',
    '{"modelx":1,"mode":2,"Model":3,"":4}', '{"m\\"odel":1}', '{"\\x":1,"model":2}', '{"model":"a","\\x":1}', '{"a":"model","b":{"model":1}}',
    '{"model":"a"} ', '{"model":"a"}x', '\t\n{"model":true}\r\n', '{"a":1}}', '{"model":"\\"}', '{"model":"\\\\"}',
  ];
  const keys = ['"model"', '"mod\\u0065l"', '"model "', '"a"', '"\\x"', '"Model"', '"mo\\"del"', '"o"', '"\\u006f"'];
  const values = ['1', '"x"', '{"model":1}', '[1,"]"]', 'null', '"\\""', '"model"', '{}'];
  let seed = 7;
  const pick = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) >>> 8) % n;
  for (let n = 0; n < 600; n++) {
    const entries = Array.from({ length: pick(5) }, () => `${keys[pick(keys.length)]}${[':', ' : ', ':\n'][pick(3)]}${values[pick(values.length)]}`);
    let text = `${[' ', ''][pick(2)]}{${entries.join([',', ' ,'][pick(2)])}}`;
    if (n % 3 === 0) {
      const at = pick(text.length + 1);
      text = n % 2 === 0 ? text.slice(0, at) + text.slice(at + 1) : text.slice(0, at) + [',', '"', '}', '\\'][pick(4)] + text.slice(at);
    }
    texts.push(text);
  }
  return texts;
}

t.test('setTopLevelString gives what editTopLevel gives with a scan, on every text the scan reads or refuses', async (t) => {
  for (const text of bentTexts()) {
    const scan = scanTopLevel(text);
    t.equal(rewrite(text, 'R"\\'), scan ? editTopLevel(text, scan, new Map([['model', JSON.stringify('R"\\')]])) : undefined, JSON.stringify(text));
  }
});

t.test('setTopLevel gives what editTopLevel gives with a scan for edits that set, keys compared in place or visited', async (t) => {
  // A function edit sees each occurrence's text: the result shows which one it was given.
  const wrap = (current: string | undefined) => `[${current ?? '"absent"'}]`;
  const setsOf: [string, string | ((current: string | undefined) => string)][][] = [[['model', '"R"']], [['model', '"R"'], ['o', wrap]], [['o', wrap], ['model', '"R"']]];
  let edited = 0;
  for (const text of bentTexts()) {
    const scan = scanTopLevel(text);
    for (const sets of setsOf) {
      const expected = scan ? editTopLevel(text, scan, new Map(sets)) : undefined;
      const what = `${JSON.stringify(text)} with ${sets.map(([key]) => key).join(', ')}`;
      t.equal(setTopLevel(text, sets.map(([key, json]) => ({ key, json }))), expected, what);
      const visited: string[] = [];
      t.equal(setTopLevel(text, sets.map(([key, json]) => ({ key, json })), (key, entry) => visited.push(`${key}=${text.slice(entry.valueStart, entry.valueEnd)}`)), expected, `${what}, visited`);
      if (scan) t.same(visited, scan.keys.map((key, i) => `${key}=${text.slice(scan.values[i]!.start, scan.values[i]!.end)}`));
      if (expected !== undefined && expected !== text) edited++;
    }
  }
  t.ok(edited > 500, `most texts were edited (${edited})`);
  for (const count of [0, 32]) t.throws(() => setTopLevel('{}', Array.from({ length: count }, (_, i) => ({ key: `k${i}`, json: '1' }))), RangeError);
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

t.test('a key with an escape JSON does not have makes the text not a JSON object, without throwing', async (t) => {
  for (const text of ['{"\\x":1}', '{"a":1,"\\u12G4":2}', '{"\\u00":1}', '{"mod\\el":1}', '{"\\U0041":1}']) {
    t.equal(scanTopLevel(text), undefined, text);
  }
  t.same(scanTopLevel('{"mod\\u0065l":1,"\\"q\\\\":2,"\\ud83d\\udc4b":3}')?.keys, ['model', '"q\\', '👋'], 'valid escapes are decoded as JSON.parse decodes them');
});

t.test('nesting a million deep and hostile strings are scanned without recursion, exactly', async (t) => {
  const n = 1_000_000;
  const deep = `{"a":${'['.repeat(n)}${']'.repeat(n)},"model":"x","b":${'{"c":'.repeat(n)}1${'}'.repeat(n)}}`;
  t.same(scanTopLevel(deep)?.keys, ['a', 'model', 'b']);
  t.equal(rewrite(deep), deep.replace('"model":"x"', '"model":"R"'));
  t.equal(topLevelValueAt(deep, deep.indexOf('"model"'))?.start, deep.indexOf('"x"'));
  t.equal(scanTopLevel(`{"a":${'['.repeat(n)}}`), undefined, 'unclosed nesting is not an object');
  const backslashes = `{"s":"${'\\\\'.repeat(n)}\\"${'\\"'.repeat(1000)}","model":"x"}`;
  t.equal(rewrite(backslashes), backslashes.replace('"model":"x"', '"model":"R"'), 'long runs of backslashes and escaped quotes');
  const manyKeys = `{${Array.from({ length: 100_000 }, (_, i) => `"k${i}":${i}`).join(',')},"model":"x"}`;
  t.equal(scanTopLevel(manyKeys)?.keys.length, 100_001);
});

t.test('editTopLevel with a function edits each occurrence from its own text', async (t) => {
  const edit = (text: string, fn: (current: string | undefined) => string | undefined) => editTopLevel(text, scanTopLevel(text)!, new Map([['o', fn]]));
  t.equal(edit('{"o":1,"a":2,"o" : [3]}', (current) => `{"was":${current}}`), '{"o":{"was":1},"a":2,"o" : {"was":[3]}}');
  t.equal(edit('{"a":2}', (current) => (current === undefined ? '"new"' : 'x')), '{"o":"new","a":2}', 'called once with undefined when absent');
  t.equal(edit('{"a":2}', () => undefined), '{"a":2}', 'nothing added when it gives undefined');
  t.equal(edit('{"o":1,"a":2}', () => undefined), '{"a":2}', 'an occurrence removed when it gives undefined');
});

t.test('scanObjectAt and scanArrayAt read one nested level, where a walk descends into a kept value', async (t) => {
  const text = 'x [ {"a" : [1, {"b":"}"}], "c\\u0064":2.0 } , "s\\"]" ,[],{}, 1e2 ] y';
  const items = scanArrayAt(text, 2);
  t.same(
    items?.map((span) => text.slice(span.start, span.end)),
    ['{"a" : [1, {"b":"}"}], "c\\u0064":2.0 }', '"s\\"]"', '[]', '{}', '1e2'],
  );
  const object = scanObjectAt(text, items![0]!.start);
  t.same(object?.keys, ['a', 'cd'], 'keys decoded as JSON.parse reads them');
  t.same(object?.values.map((span) => text.slice(span.start, span.end)), ['[1, {"b":"}"}]', '2.0']);
  t.equal(object?.end, items![0]!.end, 'end is just past the closing brace');
  t.same(scanObjectAt(text, items![3]!.start)?.keys, []);
  t.same(scanArrayAt(text, items![2]!.start), []);
  t.equal(scanObjectAt(text, 2), undefined, 'an array is not an object');
  t.equal(scanArrayAt(text, items![0]!.start), undefined, 'an object is not an array');
  t.equal(scanArrayAt('[1,', 0), undefined, 'cut');
  t.equal(scanArrayAt('[1 2]', 0), undefined, 'no comma');
  t.equal(scanObjectAt('{"a":1', 0), undefined, 'cut');
  const deep = '['.repeat(100_000) + ']'.repeat(100_000);
  t.equal(scanArrayAt(deep, 0)?.length, 1, 'iterative whatever the depth');
});
