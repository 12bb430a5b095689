// The orchestrator's side of the load generator: forks load-generator.ts and sends it one command at a time over IPC.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command, LoadCommand, LoadResult, Reply, SequentialCommand, SequentialResults } from './bench-protocol.js';
import { track, whenReady } from './children.js';
import { REPO } from './report.js';

const HERE = fileURLToPath(new URL('./', import.meta.url));

export interface LoadGenerator {
  readonly pid: number;
  send(command: LoadCommand, timeoutMs: number): Promise<LoadResult>;
  send(command: SequentialCommand, timeoutMs: number): Promise<SequentialResults>;
}

export async function startLoadGenerator(): Promise<LoadGenerator> {
  const child = track(fork(join(HERE, 'load-generator.ts'), [], { cwd: REPO, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  await whenReady(child, 'the load generator', once(child, 'message'));
  let nextId = 1;
  const pending = new Map<number, { resolve: (value: LoadResult | SequentialResults) => void; reject: (error: Error) => void }>();
  child.on('message', (reply: Reply) => {
    const waiter = pending.get(reply.id);
    if (!waiter) return;
    pending.delete(reply.id);
    if (reply.ok) waiter.resolve(reply.result);
    else waiter.reject(new Error(reply.error));
  });
  child.once('exit', (code, signal) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`the load generator exited (${String(signal ?? code)})`));
    pending.clear();
  });
  function send(command: LoadCommand | SequentialCommand, timeoutMs: number): Promise<LoadResult | SequentialResults> {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`the load generator did not answer ${command.type} within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, {
        resolve: (value) => (clearTimeout(timer), resolve(value)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
      child.send({ ...command, id } satisfies Command);
    });
  }
  return { pid: child.pid!, send: send as LoadGenerator['send'] };
}
