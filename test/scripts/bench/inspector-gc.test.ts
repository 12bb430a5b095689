// bench:instructions counts a cluster's worker and primary under callgrind: it finds each one's inspector
// (the worker's on the primary's port + 1) and asks each for its pid, then collects garbage in each.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createServer } from 'node:net';
import { connectRemoteHeap, inspectFlagForCluster, inspectorUrls } from '../../../scripts/bench/inspector-gc.js';

const CLUSTER = `import cluster from 'node:cluster';
if (cluster.isPrimary) { const worker = cluster.fork(); worker.on('online', () => console.log(JSON.stringify({ primary: process.pid, worker: worker.process.pid }))); }
else setInterval(() => {}, 1000);
`;

/** The cluster under its inspectors. The worker's inspector takes the primary's port + 1, found free with it, which
 * another process may still take in between ("address already in use"): that start is retried; any other failure, or
 * 30 s, fails the test. */
async function startCluster(t: { teardown(fn: () => unknown): void }, script: string, attempt = 1): Promise<{ pids: { primary: number; worker: number }; urls: string[] }> {
  const child = spawn(process.execPath, [await inspectFlagForCluster(), '--expose-gc', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => void child.kill('SIGKILL'));
  let stdout = '';
  let stderr = '';
  const ready = new Promise<void>((resolve, reject) => {
    const check = () => {
      if (/already in use/.test(stderr)) reject(new Error('port taken'));
      else if (stdout.includes('\n') && inspectorUrls(stderr).length >= 2) resolve();
    };
    child.stdout.on('data', (piece: Buffer) => ((stdout += piece.toString()), check()));
    child.stderr.on('data', (piece: Buffer) => ((stderr += piece.toString()), check()));
    child.on('exit', (code) => reject(new Error(`the cluster exited (${code}): ${stderr}`)));
    setTimeout(() => reject(new Error(`no two inspectors within 30 s: ${stderr}`)), 30_000).unref();
  });
  try {
    await ready;
  } catch (error) {
    child.kill('SIGKILL');
    if ((error as Error).message === 'port taken' && attempt < 5) return startCluster(t, script, attempt + 1);
    throw error;
  }
  return { pids: JSON.parse(stdout.split('\n')[0]!) as { primary: number; worker: number }, urls: inspectorUrls(stderr) };
}

t.test("a cluster's primary and worker each answer on their own inspector", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'inspector-gc-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'cluster.mjs'), CLUSTER);
  const { pids, urls } = await startCluster(t, join(dir, 'cluster.mjs'));
  const heaps = await Promise.all(urls.map((url) => connectRemoteHeap(url)));
  t.same(new Set(await Promise.all(heaps.map((heap) => heap.pid()))), new Set([pids.primary, pids.worker]), 'one inspector per process, each named by its pid');
  for (const heap of heaps) await heap.collectGarbage();
  t.pass('gc() ran in both');
  for (const heap of heaps) heap.close();
});

t.test('the inspector flag for a cluster names a free port whose next port is free too', async (t) => {
  const flag = await inspectFlagForCluster();
  const port = Number(/^--inspect=127\.0\.0\.1:(\d+)$/.exec(flag)?.[1]);
  t.ok(port > 0 && port < 65535, `a real port: ${flag}`);
  for (const each of [port, port + 1]) {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(each, '127.0.0.1', resolve);
    });
    t.pass(`127.0.0.1:${each} could be bound`);
    await new Promise((resolve) => server.close(resolve));
  }
});
