// `npm run bench:instructions -- --parts` counts a callgrind dump's instructions by part: JavaScript named through
// node's perf map and counted by its file, garbage collection and the JIT as themselves, everything else where it
// was called from, and what no JavaScript called by its own kind. A dump in callgrind's own format (as valgrind
// 3.19 writes it with --dump-instr=no: compressed names, line positions, calls= lines followed by the call's
// inclusive cost) stands for a real one, which takes minutes of valgrind to make.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { callgrindParts, partsPerRequest } from '../../../scripts/bench/callgrind-parts.js';

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

t.test('each instruction counts once, in the part the rules give it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'callgrind-parts-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'dump'), DUMP);
  writeFileSync(join(dir, 'map'), PERF_MAP);
  const byFunction = new Map<string, number>();
  const parts = callgrindParts(join(dir, 'dump'), join(dir, 'map'), byFunction);
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
  const dir = mkdtempSync(join(tmpdir(), 'callgrind-parts-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'work'), DUMP);
  writeFileSync(join(dir, 'map'), PERF_MAP);
  const parts = partsPerRequest({ work: join(dir, 'work'), perfMap: join(dir, 'map') }, 10);
  t.equal(parts.get('garbage collection'), 5);
  t.equal(parts.get('JIT compiler'), 7);
});
