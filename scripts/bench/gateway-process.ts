import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { announcedOrigin, track, whenReady } from './children.js';
import { cpuMicros, rssBytes } from './proc-stats.js';

const SERVER = fileURLToPath(new URL('../../dist/server.js', import.meta.url));

/** The built gateway as ops run it (`node dist/server.js`), in its own process so its CPU can be read alone. */
export interface GatewayProcess {
  readonly origin: string;
  /** The cluster worker that serves (what every reading below measures), not the primary node started. */
  readonly pid: number;
  /** User + system CPU of the process so far, in microseconds (from /proc, at clock-tick resolution). */
  cpuMicros(): number;
  /** Resident set size in bytes. */
  rssBytes(): number;
  /** Stops the gateway; fails if the process measured wrote no request log line (it served nothing). */
  stop(): Promise<void>;
}

/**
 * `nodeArgs` go to node before the script (e.g. --heapsnapshot-signal). The child is tracked: a bench that calls
 * killAllOnExit stops it on any way out, a failed check among them (its workers leave with their primary).
 */
export async function startGatewayProcess(env: Record<string, string>, nodeArgs: readonly string[] = []): Promise<GatewayProcess> {
  const child: ChildProcess = track(
    spawn(process.execPath, [...nodeArgs, SERVER], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  child.stderr?.on('data', () => {}); // start-up warnings about unset keys are expected here
  const origin = await whenReady(child, 'the gateway', announcedOrigin(child.stdout!));
  // The process that serves is the cluster worker, not the primary that node started: /health names it.
  const { pid } = (await (await fetch(`${origin}/health`)).json()) as { pid: number };
  process.stderr.write(`bench: measuring the gateway's cluster worker, pid ${pid} (its primary, pid ${child.pid}, serves no request)\n`);
  const served = countRequestLines(child, pid);
  return {
    origin,
    pid,
    cpuMicros: () => cpuMicros(pid),
    rssBytes: () => rssBytes(pid),
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'close'); // its stdout read to the end: the worker flushes its log lines as it stops
      if (served() === 0) throw new Error(`the gateway process measured (pid ${pid}) served no request: its figures are not the serving process's`);
    },
  };
}

/** Request log lines (JSON, on stdout) written by `pid`, counted as they arrive; /health (asked for the pid above) is not served traffic. */
function countRequestLines(child: ChildProcess, pid: number): () => number {
  let lines = 0;
  let partial = '';
  const writer = `"pid":${pid},`;
  child.stdout!.on('data', (piece: Buffer) => {
    const text = partial + piece.toString('latin1');
    const end = text.lastIndexOf('\n');
    partial = text.slice(end + 1);
    for (const line of text.slice(0, end + 1).split('\n')) if (line.includes('"msg":"request"') && line.includes(writer) && !line.includes('"path":"/health"')) lines++;
  });
  return () => lines;
}
