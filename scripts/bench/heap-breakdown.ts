// `npm run bench:streams -- --heap`: what the gateway's JavaScript heap holds per open stream. Node writes a heap
// snapshot on SIGUSR2 (--heapsnapshot-signal) into a folder of this run; this module waits for each file, sums
// the self size of every node by class (an object's constructor name, a closure's function name, or the kind of a
// string, array, code or system object), and compares a snapshot with N streams open to one taken idle.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

interface SnapshotFile {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Bytes by class, over every node of a snapshot. */
export type HeapByClass = Map<string, number>;

/** Signals the process to write a snapshot into `dir` and resolves with its bytes by class once it is whole. */
export async function takeHeapSnapshot(pid: number, dir: string, timeoutMs = 120_000): Promise<HeapByClass> {
  const before = new Set(existsSync(dir) ? readdirSync(dir) : []);
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + timeoutMs;
  let lastSize = -1;
  while (Date.now() < deadline) {
    await sleep(500);
    const file = readdirSync(dir).find((name) => name.endsWith('.heapsnapshot') && !before.has(name));
    if (!file) continue;
    const path = join(dir, file);
    const size = statSync(path).size;
    // Node writes the file in one go; a size that stopped growing and a file that parses means it is done.
    if (size > 0 && size === lastSize) {
      let byClass: HeapByClass | undefined;
      try {
        byClass = heapByClass(JSON.parse(readFileSync(path, 'utf8')) as SnapshotFile);
      } catch {
        // not whole yet
      }
      if (byClass) {
        // BENCH_STREAMS_KEEP_HEAP=folder keeps each snapshot there (made if missing), to open in DevTools (retainers, not just classes).
        const keep = process.env['BENCH_STREAMS_KEEP_HEAP'];
        if (keep) {
          mkdirSync(keep, { recursive: true });
          copyFileSync(path, join(keep, file));
        }
        rmSync(path, { force: true });
        return byClass;
      }
    }
    lastSize = size;
  }
  throw new Error(`no heap snapshot from process ${pid} within ${timeoutMs} ms`);
}

function heapByClass(file: SnapshotFile): HeapByClass {
  const fields = file.snapshot.meta.node_fields;
  const types = file.snapshot.meta.node_types[0];
  const stride = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const byClass: HeapByClass = new Map();
  for (let i = 0; i < file.nodes.length; i += stride) {
    const type = types[file.nodes[i + typeAt]!]!;
    const name = file.strings[file.nodes[i + nameAt]!]!;
    const key = type === 'closure' ? `(closure) ${name || 'anonymous'}` : type === 'object' || type === 'native' ? name : type === 'hidden' || type === 'synthetic' ? `(${type}) ${name}` : `(${type})`;
    byClass.set(key, (byClass.get(key) ?? 0) + file.nodes[i + sizeAt]!);
  }
  return byClass;
}

/** The classes that grew most from `idle` to `loaded`, per stream, and the whole heap's growth per stream. */
export function heapGrowthPerStream(idle: HeapByClass, loaded: HeapByClass, streams: number, top = 12): { total: number; rows: [string, number][] } {
  const rows: [string, number][] = [];
  let total = 0;
  for (const [name, bytes] of loaded) {
    const grown = bytes - (idle.get(name) ?? 0);
    total += grown;
    rows.push([name, grown / streams]);
  }
  for (const [name, bytes] of idle) if (!loaded.has(name)) total -= bytes;
  rows.sort((a, b) => b[1] - a[1]);
  return { total: total / streams, rows: rows.slice(0, top) };
}
