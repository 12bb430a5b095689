import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { announcedOrigin, whenReady } from './children.js';
import { cpuMicros, rssBytes } from './proc-stats.js';

const SERVER = fileURLToPath(new URL('../../dist/server.js', import.meta.url));

/** The built gateway as ops run it (`node dist/server.js`), in its own process so its CPU can be read alone. */
export interface GatewayProcess {
  readonly origin: string;
  readonly pid: number;
  /** User + system CPU of the process so far, in microseconds (from /proc, at clock-tick resolution). */
  cpuMicros(): number;
  /** Resident set size in bytes. */
  rssBytes(): number;
  stop(): Promise<void>;
}

/** `nodeArgs` go to node before the script (e.g. --heapsnapshot-signal). */
export async function startGatewayProcess(env: Record<string, string>, nodeArgs: readonly string[] = []): Promise<GatewayProcess> {
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, SERVER], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr?.on('data', () => {}); // start-up warnings about unset keys are expected here
  const origin = await whenReady(child, 'the gateway', announcedOrigin(child.stdout!));
  // The process that serves is the cluster worker, not the primary that node started: /health names it.
  const { pid } = (await (await fetch(`${origin}/health`)).json()) as { pid: number };
  return {
    origin,
    pid,
    cpuMicros: () => cpuMicros(pid),
    rssBytes: () => rssBytes(pid),
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
