// Another Node process's heap over its inspector (started with `--inspect=127.0.0.1:0`): bench:allocation runs V8's
// sampling heap profiler over it (allocation-profile.ts sums it). A full collection can be asked for too (gc(), with
// `--expose-gc`); bench:instructions no longer does: a forced collection sent hot code back to the compiler inside
// its windows (instructions.ts).
import { createServer, type Server } from 'node:net';
import type { SamplingHeapProfile } from './allocation-profile.js';

const listenOn = (port: number) =>
  new Promise<Server | undefined>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
const closeAll = (servers: (Server | undefined)[]) => Promise.all(servers.map((s) => s && new Promise((resolve) => s.close(resolve))));

/**
 * `--inspect=127.0.0.1:PORT` for a process whose cluster worker takes PORT + 1 (node's rule). With port 0 the
 * primary gets any free port and its worker's may be taken: on a machine holding thousands of loopback
 * connections (bench:streams beside it) it often was, and the worker ran with no inspector. So both ports are
 * found free together (the window until the target binds them is short; the caller still checks both answer).
 */
export async function inspectFlagForCluster(): Promise<string> {
  for (let tries = 0; tries < 50; tries++) {
    const first = await listenOn(0);
    const port = (first?.address() as { port: number } | undefined)?.port;
    const second = port !== undefined && port < 65535 ? await listenOn(port + 1) : undefined;
    await closeAll([first, second]);
    if (second) return `--inspect=127.0.0.1:${port}`;
  }
  throw new Error('no two free loopback ports in a row for a cluster\'s inspectors');
}

/** The inspector's WebSocket URL, from the `Debugger listening on ws://…` line Node prints to stderr. */
export function inspectorUrl(stderr: string): string | undefined {
  return inspectorUrls(stderr)[0];
}

/** Every inspector URL in `stderr`: a cluster primary and each worker it forks print one each (the worker's port is the primary's + 1). */
export function inspectorUrls(stderr: string): string[] {
  return [...stderr.matchAll(/Debugger listening on (ws:\/\/\S+)/g)].map((match) => match[1]!);
}

export interface RemoteHeap {
  /** Resolves when the target has finished one full (mark-compact) collection: `gc()`, as --expose-gc gives it. */
  collectGarbage(): Promise<void>;
  /** The process's pid, asked of it: which of a cluster's inspectors belongs to which process. */
  pid(): Promise<number>;
  /** Runtime.evaluate in the target: the expression's value (by value). */
  evaluate(expression: string): Promise<unknown>;
  /** HeapProfiler.startSampling every ~`intervalBytes`, keeping the samples of objects young and full collections freed. */
  startSampling(intervalBytes: number): Promise<void>;
  /** HeapProfiler.stopSampling: every sample since startSampling. */
  stopSampling(): Promise<SamplingHeapProfile>;
  close(): void;
}

export async function connectRemoteHeap(url: string): Promise<RemoteHeap> {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error(`no inspector at ${url}`));
  });
  let lastId = 0;
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  socket.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; error?: { message: string }; result?: unknown };
    const call = message.id === undefined ? undefined : waiting.get(message.id);
    if (!call) return;
    waiting.delete(message.id!);
    if (message.error) call.reject(new Error(message.error.message));
    else call.resolve(message.result);
  };
  const send = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = ++lastId;
      waiting.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  const evaluate = async (expression: string) => ((await send('Runtime.evaluate', { expression, returnByValue: true })) as { result?: { value?: unknown } }).result?.value;
  return {
    // HeapProfiler.collectGarbage would collect until nothing more is freed (up to seven times): costlier, no steadier.
    collectGarbage: async () => void (await evaluate('gc()')),
    pid: async () => Number(await evaluate('process.pid')),
    evaluate,
    startSampling: async (intervalBytes) =>
      void (await send('HeapProfiler.startSampling', { samplingInterval: intervalBytes, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })),
    stopSampling: async () => ((await send('HeapProfiler.stopSampling')) as { profile: SamplingHeapProfile }).profile,
    close: () => socket.close(),
  };
}
