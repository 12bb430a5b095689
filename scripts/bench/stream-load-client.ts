// The orchestrator's side of the bench:streams load processes: forks stream-load.ts, sends it commands and
// waits for its replies over IPC.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { track, whenReady } from './children.js';
import { REPO } from './report.js';
import type { StreamLoadCommand, StreamLoadReply } from './stream-protocol.js';

const HERE = fileURLToPath(new URL('./', import.meta.url));

export interface StreamLoad {
  readonly pid: number;
  send(command: StreamLoadCommand): void;
  /** The next reply of this type, or an error when the process exits first or `timeoutMs` passes. */
  next<T extends StreamLoadReply['type']>(type: T, timeoutMs: number): Promise<Extract<StreamLoadReply, { type: T }>>;
  stop(): void;
}

export async function startStreamLoad(): Promise<StreamLoad> {
  const child = track(fork(join(HERE, 'stream-load.ts'), [], { cwd: REPO, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  await whenReady(child, 'a stream load process', once(child, 'message'));
  return {
    pid: child.pid!,
    send: (command) => child.send(command),
    next(type, timeoutMs) {
      return whenReady(
        child,
        `a stream load process's "${type}" reply`,
        new Promise((resolve) => {
          const onMessage = (reply: StreamLoadReply) => {
            if (reply.type !== type) return;
            child.off('message', onMessage);
            resolve(reply as Extract<StreamLoadReply, { type: typeof type }>);
          };
          child.on('message', onMessage);
        }),
        timeoutMs,
      );
    },
    stop: () => child.kill('SIGKILL'),
  };
}
