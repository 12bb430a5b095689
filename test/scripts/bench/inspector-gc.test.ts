// bench:instructions counts a cluster's worker and primary under callgrind: it finds each one's inspector
// (the worker's on the primary's port + 1) and asks each for its pid, then collects garbage in each.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { connectRemoteHeap, inspectorUrls } from '../../../scripts/bench/inspector-gc.js';

const CLUSTER = `import cluster from 'node:cluster';
if (cluster.isPrimary) { const worker = cluster.fork(); worker.on('online', () => console.log(JSON.stringify({ primary: process.pid, worker: worker.process.pid }))); }
else setInterval(() => {}, 1000);
`;

t.test("a cluster's primary and worker each answer on their own inspector", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'inspector-gc-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'cluster.mjs'), CLUSTER);
  const child = spawn(process.execPath, ['--inspect=127.0.0.1:0', '--expose-gc', join(dir, 'cluster.mjs')], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => void child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.on('data', (piece: Buffer) => (stderr += piece.toString()));
  const [first] = (await once(child.stdout, 'data')) as [Buffer];
  const pids = JSON.parse(first.toString()) as { primary: number; worker: number };
  while (inspectorUrls(stderr).length < 2) await once(child.stderr, 'data');
  const heaps = await Promise.all(inspectorUrls(stderr).map((url) => connectRemoteHeap(url)));
  t.same(new Set(await Promise.all(heaps.map((heap) => heap.pid()))), new Set([pids.primary, pids.worker]), 'one inspector per process, each named by its pid');
  for (const heap of heaps) await heap.collectGarbage();
  t.pass('gc() ran in both');
  for (const heap of heaps) heap.close();
});
