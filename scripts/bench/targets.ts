// Starting and stopping what `npm run bench` measures and what serves it: the mock provider and the three proxies
// (forked, transpiled to plain JavaScript in this run's temporary folder), CPU pinning, and failing the run.
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { bareEnv, killAll, onStop, portMessage, track, whenReady } from './children.js';
import { REPO, transpile as transpileInto } from './report.js';
import { PIN } from './settings.js';

/** A process under load: where to send requests, and whose CPU to read. */
export interface Target {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
}

export function fatal(error: unknown): never {
  process.stderr.write(`\nbench: FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  killAll();
  process.exit(1);
}

/** Pins every thread of a process (taskset -a). Threads started later inherit it. */
export function pin(pid: number, cpus: string): void {
  if (PIN) execFileSync('taskset', ['-a', '-c', '-p', cpus, String(pid)], { stdio: 'ignore' });
}

let tmpDir: string | undefined;

/** This run's temporary folder, inside node_modules so that packages (`got`, the gateway's) resolve; removed on the way out. */
export function runDir(): string {
  if (!tmpDir) {
    mkdirSync(join(REPO, 'node_modules', '.cache'), { recursive: true });
    const dir = mkdtempSync(join(REPO, 'node_modules', '.cache', 'gateway-bench-'));
    onStop(() => rmSync(dir, { recursive: true, force: true }));
    tmpDir = dir;
  }
  return tmpDir;
}

export async function startForked(file: string, what: string, env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const child = track(fork(transpileInto(file, runDir()), [], { cwd: REPO, execArgv: [], env: bareEnv(env), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  return { child, port: await whenReady(child, what, portMessage(child)) };
}

export const startMockProvider = () => startForked('bench-mock-provider.ts', 'the mock provider', {});

/** The proxies `npm run bench` measures beside the gateway, in the order startProxies returns them. */
export const PROXIES = [
  { name: 'raw proxy', file: 'raw-proxy.ts', env: {} },
  { name: 'got proxy', file: 'got-proxy.ts', env: {} },
  { name: 'Express proxy', file: 'got-proxy.ts', env: { PROXY_FRONT: 'express' } },
] as const;

/** Every proxy of PROXIES in front of the mock provider, started one after another. */
export async function startProxies(mockPort: number): Promise<Target[]> {
  const targets: Target[] = [];
  for (const proxy of PROXIES) {
    const { child, port } = await startForked(proxy.file, `the ${proxy.name}`, { ...proxy.env, UPSTREAM_PORT: String(mockPort) });
    targets.push({ name: proxy.name, url: `http://127.0.0.1:${port}/v1/chat/completions`, pid: child.pid! });
  }
  return targets;
}
