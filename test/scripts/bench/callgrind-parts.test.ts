// `npm run bench:instructions -- --parts` counts a callgrind dump's instructions by part: JavaScript named through
// node's perf map and counted by its file, garbage collection and the JIT as themselves, everything else where it
// was called from, and what no JavaScript called by its own kind. A dump in callgrind's own format (as valgrind
// 3.19 writes it with --dump-instr=no: compressed names, line positions, calls= lines followed by the call's
// inclusive cost) stands for a real one, which takes minutes of valgrind to make.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { callgrindParts, functionsTable, partsPerRequest, shortFunctionName } from '../../../scripts/bench/callgrind-parts.js';

const PERF_MAP = [
  '1000 20 JS:~stale file:///srv/gateway/dist/observe/old.js:1:1',
  '2000 80 JS:+addRequest node:_http_agent:363:49',
  '3000 40 JS:^handle /srv/gateway/node_modules/router/index.js:150:43',
  // Code written over freed code: the later entry names the address.
  '1000 100 JS:*chatCompletions file:///srv/gateway/dist/endpoints/chat-completions.js:16:42',
].join('\n');

// main → uv_run → Node's http_parser → llhttp (no JavaScript above it, and not V8's parser); JavaScript → a
// builtin → the runtime, in a cycle with the builtin; the scavenger called from the runtime; the compiler alone.
const DUMP = `# callgrind format
version: 1
creator: callgrind-3.19.0
positions: line
events: Ir
summary: 0

ob=(1) /usr/bin/node
fl=(1) ???
fn=(1) main
0 10
cfn=(2) uv_run
calls=1 0
0 1010
fn=(2)
0 10
cfn=(3) node::http_parser::Parser::Execute(char const*, unsigned long)
calls=1 0
0 1000
fn=(3)
0 400
cfn=(4) llhttp__internal__run
calls=1 0
0 300
cfn=(5) 0x0000000000001010
calls=1 0
0 300
fn=(4)
0 300
fn=(5)
0 100
cfn=(6) Builtins_CopyDataProperties
calls=2 0
0 200
fn=(7) 0x0000000000002004
0 50
cfn=(6)
calls=2 0
0 600
fn=(6)
0 200
cfn=(8) v8::internal::Runtime_CopyDataProperties(int, unsigned long*, v8::internal::Isolate*)
calls=4 0
0 600
fn=(8)
0 500
cfn=(6)
calls=1 0
0 50
cfn=(9) v8::internal::Scavenger::ScavengeObject
calls=1 0
0 50
fn=(9)
0 50
fn=(10) v8::internal::compiler::GraphReducer::ReduceTop()
0 70
fn=(11) 0x0000000000003010
0 30
totals: 1720
`;

/** DUMP and PERF_MAP in files of a temporary directory, removed when `t` ends. */
function writeDumpAndMap(t: Test): { work: string; perfMap: string } {
  const dir = mkdtempSync(join(tmpdir(), 'callgrind-parts-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'work'), DUMP);
  writeFileSync(join(dir, 'map'), PERF_MAP);
  return { work: join(dir, 'work'), perfMap: join(dir, 'map') };
}

t.test('each instruction counts once, in the part the rules give it', async (t) => {
  const files = writeDumpAndMap(t);
  const byFunction = new Map<string, number>();
  const parts = callgrindParts(files.work, files.perfMap, byFunction);
  const total = [...parts.values()].reduce((a, b) => a + b, 0);
  t.equal(Math.round(total), 1720, 'the parts add up to the dump total');
  // The builtin and the runtime (700 + the scavenger's 50 aside) split 1 : 3 between the two JavaScript callers,
  // by what each spent in the builtin (200 and 600).
  const runtimeAndBuiltin = 200 + 500;
  t.equal(Math.round(parts.get('gateway: endpoints')!), 100 + runtimeAndBuiltin / 4, 'the gateway JavaScript and its share of the builtin');
  t.equal(Math.round(parts.get('Node core (JavaScript)')!), 50 + (runtimeAndBuiltin * 3) / 4, "Node's JavaScript and its share");
  t.equal(parts.get('garbage collection'), 50, 'the scavenger counts as collection, not as its caller');
  t.equal(parts.get('JIT compiler'), 70);
  t.equal(parts.get('Express'), 30, 'a package is counted by what it does in the gateway');
  t.equal(parts.get('native, not called from JavaScript: HTTP parsing (llhttp)'), 300);
  t.equal(parts.get("native, not called from JavaScript: Node's C++"), 400);
  t.equal(parts.get('native, not called from JavaScript: libuv'), 10);
  t.equal(parts.get('native, not called from JavaScript: other (libc, unnamed code)'), 10, 'main');
  t.notOk([...byFunction.keys()].some((key) => key.includes('stale')), 'an address takes the later of two overlapping map entries');
});

t.test("per request: the window's instructions by part, divided by its requests", async (t) => {
  const files = writeDumpAndMap(t);
  const parts = partsPerRequest(files, 10);
  t.equal(parts.get('garbage collection'), 5);
  t.equal(parts.get('JIT compiler'), 7);
});

t.test('per request by function too, when asked: the same instructions, divided by the requests', async (t) => {
  const files = writeDumpAndMap(t);
  const byFunction = new Map<string, number>();
  partsPerRequest(files, 10, byFunction);
  t.equal(byFunction.get('JIT compiler\tv8::internal::compiler::GraphReducer::ReduceTop()'), 7);
  t.equal(Math.round([...byFunction.values()].reduce((a, b) => a + b, 0)), 172, 'the whole dump, per request');
});

t.test('the functions that grew most: one row per function, largest growth first, with the parts it counted in', async (t) => {
  const files = writeDumpAndMap(t);
  const gateway = new Map<string, number>();
  callgrindParts(files.work, files.perfMap, gateway);
  // The got proxy ran the same builtin for 900 instructions: the gateway's 200 (its own; the runtime it calls is a
  // row of its own) are 700 fewer, so it comes last.
  const got = new Map([['Node core (JavaScript)\tBuiltins_CopyDataProperties', 900]]);
  const table = functionsTable('streamed', got, gateway, 3).split('\n');
  t.equal(table.length, 2 + 3, 'a header, its rule and the top 3 rows');
  t.match(table[0], /^\| streamed: the 3 functions that grew most \| got proxy \| gateway \| gateway − got proxy \|/);
  t.match(table[2], /^\| v8::internal::Runtime_CopyDataProperties \| 0\.0 k \| 0\.5 k \| 0\.5 k \| Node core \(JavaScript\) 75%, endpoints 25% \|$/, 'the largest growth first, C++ named without its parameters, split over the parts of its callers');
  t.match(table[3], /^\| node::http_parser::Parser::Execute \| 0\.0 k \| 0\.4 k \| 0\.4 k \| native, not called from JavaScript: Node's C\+\+ 100% \|$/);
  const all = functionsTable('streamed', got, gateway, 50);
  t.match(all, /\| Builtins_CopyDataProperties \| 0\.9 k \| 0\.2 k \| −0\.7 k \| Node core \(JavaScript\) 75%, endpoints 25% \|$/, 'a function that shrank comes last');
  t.match(all, /\| chatCompletions \(endpoints\/chat-completions\.js\) \| 0\.0 k \| 0\.1 k \| 0\.1 k \| endpoints 100% \|/, 'JavaScript by name and file under dist/');
});

t.test('function names as the table shows them', async (t) => {
  t.equal(shortFunctionName("JS:*'relayStream file:///tmp/x/dist/routing/relay-stream.js:37:34"), 'relayStream (routing/relay-stream.js)');
  t.equal(shortFunctionName('JS:^handle /srv/gateway/node_modules/router/index.js:150:43'), 'handle (router/index.js)');
  t.equal(shortFunctionName("JS:*' node:internal/streams/readable:1394:36"), '(anonymous) (node:internal/streams/readable)');
  t.equal(shortFunctionName("RegExp.> src: '\"(?:model|error)\"' flags: 'g'"), 'regexp /"(?:model|error)"/g');
  t.equal(shortFunctionName('void v8::internal::String::WriteToFlat2<unsigned char>(unsigned char*, v8::internal::Tagged<v8::internal::ConsString>)'), 'void v8::internal::String::WriteToFlat2<…>');
  t.equal(shortFunctionName(`Builtins_${'X'.repeat(200)}`).length, 90, 'cut to 90 characters');
  t.match(functionsTable('s', new Map(), new Map([["gateway: dialects\tRegExp.> src: 'a|b' flags: 'g'", 5000]]), 1), /\| regexp \/a\\\|b\/g \|/, 'a pipe in a name is escaped for the table');
});
