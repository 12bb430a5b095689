import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { compileRoutes } from '../../scripts/routes/compile-routes.js';

export const SERVER = fileURLToPath(new URL('../../dist/server.js', import.meta.url));

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly origin: string;
  readonly output: () => string;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
}

/**
 * `node dist/server.js` as ops run it (npm test builds first), on a free loopback port; or, given `args`, node
 * with those (a script and its flags, such as test/helpers/gateway-child.ts under a heap limit).
 */
export async function startServerProcess(env: Record<string, string>, args: readonly string[] = [SERVER]): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, { env: { PATH: process.env['PATH'] ?? '', PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (piece: Buffer) => (output += piece.toString()));
  child.stderr.on('data', (piece: Buffer) => (output += piece.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const origin = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout.on('data', check);
    void exited.then((code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
  return { child, origin, output: () => output, exited };
}

/** Runs the server expecting it to refuse to start; returns its exit code and output. */
export async function runServerExpectingExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [SERVER], { env: { PATH: process.env['PATH'] ?? '', PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (piece: Buffer) => (output += piece.toString()));
  child.stderr.on('data', (piece: Buffer) => (output += piece.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, output };
}

/** The JSON log lines in a server's output, parsed (the plain start-up line and stderr text are skipped). */
export function logLinesOf(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Resolves with what `find` returns once it returns something for the output so far; rejects after `timeoutMs`. */
export async function waitForOutput<T>(server: ServerProcess, find: (output: string) => T | undefined, timeoutMs = 15_000): Promise<T> {
  const stdout = server.child.stdout!;
  return new Promise<T>((resolve, reject) => {
    const check = () => {
      const found = find(server.output());
      if (found === undefined) return;
      stop();
      resolve(found);
    };
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`not in the output within ${timeoutMs} ms:\n${server.output()}`));
    }, timeoutMs);
    const stop = () => {
      clearTimeout(timer);
      stdout.off('data', check);
    };
    // Listeners run in order: the helper's own listener has appended the new piece to the output by now.
    stdout.on('data', check);
    check();
  });
}

/** A streamed chat request whose first read has arrived: the stream is under way when this resolves. */
export async function streamUnderWay(origin: string, body: string): Promise<{ rest: () => Promise<string> }> {
  const response = await fetch(`${origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value, { stream: true });
  return {
    /** Everything the stream sends, from its first read to its end. */
    async rest() {
      for (let part = await reader.read(); !part.done; part = await reader.read()) text += decoder.decode(part.value, { stream: true });
      return text;
    },
  };
}

const HARNESS = fileURLToPath(new URL('./cluster-gateway.mjs', import.meta.url));

/**
 * WORKERS=2 on `routes` (cluster-gateway.mjs, on dist/), its mock provider at `upstreamOrigin`; resolves once both
 * workers listen, and is killed when the test ends. `output()`: everything the cluster wrote so far.
 */
export async function startCallersCluster(t: Test, routes: string, upstreamOrigin: string): Promise<{ origin: string; output: () => string }> {
  const compiled = compileRoutes(routes);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  const child = spawn(process.execPath, [HARNESS], {
    env: { PATH: process.env['PATH'] ?? '', ROUTE_TABLES: JSON.stringify(compiled.tables), MOCK_BASE_URL: `${upstreamOrigin}/v1`, MOCK_API_KEY: 'k' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (piece: Buffer) => (output += piece.toString()));
  child.stderr.on('data', (piece: Buffer) => (output += piece.toString()));
  t.teardown(async () => {
    if (child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  });
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no cluster within 120 s: ${output}`)), 120_000);
    child.stdout.on('data', () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match && output.split('"worker listening"').length > 2) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
  });
  return { origin, output: () => output };
}
