// The parts of `npm run bench:instructions -- --parts`: a callgrind dump's instructions, each counted in one part
// of the target, as `npm run bench:profile` counts perf samples (profile-parts.ts), but noise-proof.
// JavaScript is named by the target's perf map (`node --perf-basic-prof` writes /tmp/perf-<pid>.map; callgrind
// knows JIT code only by address) and counted by its file; garbage collection and the JIT compiler count as
// themselves; everything else (V8's builtins and runtime, Node's C++, libuv, llhttp, libc) is counted where it
// was called from: its instructions go up its call arcs, split by what each caller spent in it, until they reach
// one of those parts. What no JavaScript called (the event loop's own work: libuv, Node's C++ between a socket and
// its JavaScript callback, llhttp) counts by its own kind (nativePart). Beside the parts, the functions whose count
// grew most from the got proxy to the gateway (functionsTable): what a part's difference is made of.
import { readFileSync } from 'node:fs';
import { COMPILER_FUNCTION, GC_FUNCTION, partOfUrl } from './profile-parts.js';

/** Instructions by part. */
export type InstructionParts = Map<string, number>;

/** A share's placeholder for "no JavaScript above": counted by the kind of the function itself. */
const NO_CALLER = '';
/** perf map names: `JS:<tier mark><name> <url>:<line>:<column>`, or a builtin's, a regexp's, a stub's name. */
const JS_NAME = /^JS:\S?(?:.*?) (\S+):\d+:\d+$/;

interface PerfMap {
  readonly starts: Float64Array;
  readonly ends: Float64Array;
  readonly names: readonly string[];
}

/** A perf map's entries sorted by start; where two overlap, the later one (code written over freed code) wins. */
function readPerfMap(file: string): PerfMap {
  const byStart = new Map<number, [number, string]>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (match) byStart.set(parseInt(match[1]!, 16), [parseInt(match[1]!, 16) + parseInt(match[2]!, 16), match[3]!]);
  }
  const sorted = [...byStart].sort((a, b) => a[0] - b[0]);
  return { starts: Float64Array.from(sorted, ([start]) => start), ends: Float64Array.from(sorted, ([, [end]]) => end), names: sorted.map(([, [, name]]) => name) };
}

function lookUp(map: PerfMap, address: number): string | undefined {
  let low = 0;
  let high = map.starts.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (map.starts[middle]! <= address) low = middle + 1;
    else high = middle - 1;
  }
  // high is the last entry starting at or before the address; an earlier, longer entry may still hold it.
  for (let i = high; i >= 0 && i > high - 8; i--) if (map.ends[i]! > address) return map.names[i];
  return undefined;
}

/** Native work no JavaScript called, by kind. */
function nativePart(name: string): string {
  if (name.startsWith('llhttp')) return 'native, not called from JavaScript: HTTP parsing (llhttp)';
  if (/^uv_|^uv__/.test(name)) return 'native, not called from JavaScript: libuv';
  if (name.startsWith('node::')) return "native, not called from JavaScript: Node's C++";
  if (name.startsWith('v8::') || name.startsWith('Builtins_')) return 'native, not called from JavaScript: V8 (entering JavaScript, microtasks)';
  return 'native, not called from JavaScript: other (libc, unnamed code)';
}

/** The part a function counts in by its name alone, or undefined: counted where it was called from. */
function ownPart(name: string): string | undefined {
  const js = JS_NAME.exec(name);
  if (js) return partOfUrl(js[1]!);
  if (GC_FUNCTION.test(name)) return 'garbage collection';
  if (COMPILER_FUNCTION.test(name)) return 'JIT compiler';
  return undefined;
}

interface Dump {
  /** Function id → name (JIT addresses already named from the perf map where it has them). */
  readonly names: Map<string, string>;
  readonly self: Map<string, number>;
  /** Callee id → caller id → inclusive instructions of those calls. */
  readonly callers: Map<string, Map<string, number>>;
}

/** Reads a callgrind dump (one event, Ir; positions as lines, as `--dump-instr=no` writes them). */
function readDump(file: string, map: PerfMap): Dump {
  const names = new Map<string, string>();
  const self = new Map<string, number>();
  const callers = new Map<string, Map<string, number>>();
  const idOf = (spec: string) => {
    const match = /^\((\d+)\)(?: (.*))?$/.exec(spec.trim());
    if (!match) return spec.trim();
    if (match[2] !== undefined) names.set(match[1]!, match[2]);
    return match[1]!;
  };
  let fn = '';
  let callee: string | undefined;
  let callCostNext = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('fn=')) fn = idOf(line.slice(3));
    else if (line.startsWith('cfn=')) callee = idOf(line.slice(4));
    else if (line.startsWith('calls=')) callCostNext = true;
    else if (/^[0-9+\-*]/.test(line)) {
      const cost = Number(line.split(' ')[1] ?? 0);
      if (callCostNext && callee !== undefined) {
        const of = callers.get(callee) ?? new Map<string, number>();
        of.set(fn, (of.get(fn) ?? 0) + cost);
        callers.set(callee, of);
        callCostNext = false;
      } else self.set(fn, (self.get(fn) ?? 0) + cost);
    }
  }
  for (const [id, name] of names) {
    if (/^0x[0-9a-f]+$/.test(name)) names.set(id, lookUp(map, parseInt(name, 16)) ?? name);
  }
  return { names, self, callers };
}

/**
 * Instructions by part in a callgrind dump of a node process that ran with --perf-basic-prof (its map in `perfMap`);
 * `byFunction`, if given, also gets them by part and function (`<part>\t<function>`), to see what a part holds.
 */
export function callgrindParts(dumpFile: string, perfMapFile: string, byFunction?: Map<string, number>): InstructionParts {
  const dump = readDump(dumpFile, readPerfMap(perfMapFile));
  // How each function's instructions split over parts: its own part, or its callers' shares weighted by what each
  // spent in it. Cycles of native calls make this a fixed point, found by passes over every function until no share
  // moves (a few dozen passes; a function whose callers have no share yet waits for them).
  const shares = new Map<string, Map<string, number>>();
  const open: string[] = [];
  for (const id of new Set([...dump.self.keys(), ...dump.callers.keys()])) {
    const own = ownPart(dump.names.get(id) ?? id);
    const callers = [...(dump.callers.get(id) ?? [])].filter(([caller, cost]) => cost > 0 && caller !== id);
    if (own) shares.set(id, new Map([[own, 1]]));
    else if (callers.length === 0) shares.set(id, new Map([[NO_CALLER, 1]]));
    else open.push(id);
  }
  for (let pass = 0; pass < 100; pass++) {
    let moved = 0;
    for (const id of open) {
      const share = new Map<string, number>();
      let weight = 0;
      for (const [caller, cost] of dump.callers.get(id)!) {
        const above = caller === id ? undefined : shares.get(caller);
        if (!above || above.size === 0) continue;
        weight += cost;
        for (const [part, fraction] of above) share.set(part, (share.get(part) ?? 0) + fraction * cost);
      }
      if (weight === 0) continue;
      const before = shares.get(id);
      for (const [part, value] of share) {
        share.set(part, value / weight);
        moved = Math.max(moved, Math.abs(value / weight - (before?.get(part) ?? 0)));
      }
      shares.set(id, share);
    }
    if (moved < 1e-4) break;
  }
  const parts: InstructionParts = new Map();
  for (const [id, cost] of dump.self) {
    for (const [share, fraction] of shares.get(id) ?? new Map([[NO_CALLER, 1]])) {
      const part = share === NO_CALLER ? nativePart(dump.names.get(id) ?? id) : share;
      parts.set(part, (parts.get(part) ?? 0) + cost * fraction);
      if (byFunction) {
        const key = `${part}\t${dump.names.get(id) ?? id}`;
        byFunction.set(key, (byFunction.get(key) ?? 0) + cost * fraction);
      }
    }
  }
  return parts;
}

/**
 * Instructions per request by part, over the window of `requests`; `byFunction`, if given, also gets them per request
 * by part and function (`<part>\t<function>`, as callgrindParts gives them).
 */
export function partsPerRequest(files: { work: string; perfMap: string }, requests: number, byFunction?: Map<string, number>): InstructionParts {
  const perRequest: InstructionParts = new Map();
  const functions = byFunction ? new Map<string, number>() : undefined;
  for (const [part, instructions] of callgrindParts(files.work, files.perfMap, functions)) perRequest.set(part, instructions / requests);
  for (const [key, instructions] of functions ?? []) byFunction!.set(key, instructions / requests);
  return perRequest;
}

/** A markdown table of one scenario's parts, the got proxy beside the gateway, largest difference first. */
export function partsTable(scenario: string, got: InstructionParts, gateway: InstructionParts): string {
  const thousands = (n: number) => `${n < 0 ? '−' : ''}${Math.abs(n / 1e3).toFixed(0)} k`;
  const of = (parts: InstructionParts, part: string) => parts.get(part) ?? 0;
  const sum = (parts: InstructionParts) => [...parts.values()].reduce((a, b) => a + b, 0);
  const names = [...new Set([...got.keys(), ...gateway.keys()])]
    .filter((part) => Math.abs(of(gateway, part)) >= 5e3 || Math.abs(of(got, part)) >= 5e3)
    .sort((a, b) => of(gateway, b) - of(got, b) - (of(gateway, a) - of(got, a)));
  return [
    `| ${scenario}: part | got proxy | gateway | gateway − got proxy |`,
    '|---|---:|---:|---:|',
    ...names.map((part) => `| ${part} | ${thousands(of(got, part))} | ${thousands(of(gateway, part))} | ${thousands(of(gateway, part) - of(got, part))} |`),
    `| **all** (parts under 5 k in both left out of the rows, not of this sum) | **${thousands(sum(got))}** | **${thousands(sum(gateway))}** | **${thousands(sum(gateway) - sum(got))}** |`,
  ].join('\n');
}

/**
 * A function's name as a table shows it: JavaScript as `name (file)` with the file from its package or `dist/` on
 * (`relayStream (routing/relay-stream.js)`), a regexp by its source, C++ without its parameters; cut to 90 characters.
 */
export function shortFunctionName(name: string): string {
  const js = /^JS:\S?'?(.*?) (\S+):\d+:\d+$/.exec(name);
  const regexp = /^RegExp\.> src: '(.*)' flags: '(\w*)'$/.exec(name);
  const short = js
    ? `${js[1] || '(anonymous)'} (${js[2]!.replace(/^.*\/(?:dist|node_modules)\//, '').replace(/^file:\/\//, '')})`
    : regexp
      ? `regexp /${regexp[1]}/${regexp[2]}`
      : name.replace(/\(.*$/, '').replace(/<.*>/g, '<…>');
  return short.length > 90 ? `${short.slice(0, 89)}…` : short;
}

/**
 * A markdown table of the `top` functions whose instructions grew most from the got proxy to the gateway in one
 * scenario, per request, from callgrindParts' `byFunction` maps: one row per function, with the parts its gateway
 * instructions counted in (a builtin or a regexp counts where it was called from, so it may sit in several).
 */
export function functionsTable(scenario: string, got: ReadonlyMap<string, number>, gateway: ReadonlyMap<string, number>, top: number): string {
  const thousands = (n: number) => `${n < 0 ? '−' : ''}${Math.abs(n / 1e3).toFixed(1)} k`;
  const byName = (byFunction: ReadonlyMap<string, number>) => {
    const totals = new Map<string, { total: number; parts: Map<string, number> }>();
    for (const [key, instructions] of byFunction) {
      const [part, name] = key.split('\t') as [string, string];
      const entry = totals.get(name) ?? { total: 0, parts: new Map<string, number>() };
      entry.total += instructions;
      entry.parts.set(part, (entry.parts.get(part) ?? 0) + instructions);
      totals.set(name, entry);
    }
    return totals;
  };
  const [gotByName, gatewayByName] = [byName(got), byName(gateway)];
  const rows = [...new Set([...gotByName.keys(), ...gatewayByName.keys()])]
    .map((name) => ({ name, got: gotByName.get(name)?.total ?? 0, gateway: gatewayByName.get(name) }))
    .sort((a, b) => (b.gateway?.total ?? 0) - b.got - ((a.gateway?.total ?? 0) - a.got))
    .slice(0, top);
  const partsOf = (entry: { total: number; parts: Map<string, number> } | undefined) =>
    [...(entry?.parts ?? [])]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 2)
      .map(([part, instructions]) => `${part.replace(/^gateway: /, '')} ${Math.round((instructions / entry!.total) * 100)}%`)
      .join(', ');
  const cell = (text: string) => text.replaceAll('|', '\\|');
  return [
    `| ${scenario}: the ${top} functions that grew most | got proxy | gateway | gateway − got proxy | the gateway's, counted in |`,
    '|---|---:|---:|---:|---|',
    ...rows.map(({ name, got, gateway }) => `| ${cell(shortFunctionName(name))} | ${thousands(got)} | ${thousands(gateway?.total ?? 0)} | ${thousands((gateway?.total ?? 0) - got)} | ${cell(partsOf(gateway))} |`),
  ].join('\n');
}
