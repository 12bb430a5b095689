// The child processes of a bench script: started with a bare environment, awaited until ready, and every one
// killed on the way out (with the script's temporary files), however the script ends.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

const children = new Set<ChildProcess>();
const cleanups: (() => void)[] = [];

export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Runs `cleanup` once, after every child is killed. */
export function onStop(cleanup: () => void): void {
  cleanups.push(cleanup);
}

export function killAll(): void {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const cleanup of cleanups.splice(0)) cleanup();
}

/** Kills every child when the script exits, and on SIGINT/SIGTERM/SIGHUP (exit code 130). */
export function killAllOnExit(tool: string): void {
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      process.stderr.write(`\n${tool}: ${signal}, stopping every child\n`);
      killAll();
      process.exit(130);
    });
  }
}

/** A bare environment: no NODE_OPTIONS, no gateway settings from the caller's shell, so every target runs its defaults. */
export function bareEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LANG: 'C.UTF-8', ...extra };
}

/** `ready`, or an error when `child` exits first or is not ready within `timeoutMs`; `detail` adds what it printed. */
export async function whenReady<T>(child: ChildProcess, what: string, ready: Promise<T>, timeoutMs = 30_000, detail = () => ''): Promise<T> {
  const cancel = new AbortController();
  const exited = once(child, 'exit', { signal: cancel.signal }).then(([code, signal]) => {
    throw new Error(`${what} exited (${String(signal ?? code)}) before it was ready${detail()}`);
  });
  const timeout = sleep(timeoutMs, undefined, { signal: cancel.signal }).then(() => {
    throw new Error(`${what} was not ready within ${timeoutMs} ms${detail()}`);
  });
  try {
    return await Promise.race([ready, exited, timeout]);
  } finally {
    cancel.abort();
    // The two losers reject with AbortError now: nothing is waiting for them.
    exited.catch(() => {});
    timeout.catch(() => {});
  }
}

/** The port a forked target reports over IPC (`process.send({ port })`). */
export function portMessage(child: ChildProcess): Promise<number> {
  return once(child, 'message').then(([value]) => (value as { port: number }).port);
}

/** The origin in the gateway's start-up line (`… listening on http://host:port …`); output after it is not kept. */
export function announcedOrigin(stdout: Readable): Promise<string> {
  return new Promise((resolve) => {
    let head = '';
    const onData = (piece: Buffer) => {
      head += piece.toString();
      const match = /listening on (http:\/\/\S+)/.exec(head);
      if (!match) return;
      stdout.off('data', onData);
      stdout.resume(); // drained, so the child never blocks on a full pipe
      resolve(match[1]!);
    };
    stdout.on('data', onData);
  });
}
