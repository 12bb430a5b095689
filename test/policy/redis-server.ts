import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { onFreePort } from '../helpers/free-port.js';

/**
 * A real redis-server (the Debian package; .ci/run installs it) on a free loopback port, with nothing saved to disk,
 * and DEBUG allowed from loopback (Redis 7 refuses it otherwise) so a test can slow it with DEBUG SLEEP.
 */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Kills it at once (SIGKILL), as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: it saves nothing). */
  restart(): Promise<void>;
  /** SIGSTOP: the process stops answering while its connections stay open, as a stalled host would. */
  pause(): void;
  /** SIGCONT: it runs again, and answers what it was sent meanwhile. */
  resume(): void;
  stop(): Promise<void>;
}

export async function startRedisServer(): Promise<RedisServer> {
  const started = await onFreePort(async (port) => ({ port, child: await launch(port) }));
  const { port } = started;
  let child: ChildProcess | undefined = started.child;
  const kill = async () => {
    if (!child) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
    child = undefined;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    async restart() {
      await kill();
      child = await launch(port);
    },
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    stop: kill,
  };
}

async function launch(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no', '--enable-debug-command', 'local'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start within 10 s: ${output}`)), 10_000);
    child.stdout!.on('data', (piece: Buffer) => {
      output += piece.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot run redis-server (apt-get install -y redis-server): ${error.message}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}: ${output}`));
    });
  });
  child.stdout!.resume();
  return child;
}
