import { createServer } from 'node:net';

/** A loopback port free right now, for a server that must be told its port (redis-server, prometheus). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a server on a free port, and on another should that port be taken between the pick and the bind (another
 * test's server can take it; the start then fails with "address already in use"). Any other failure is thrown at once.
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>, tries = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePort());
    } catch (error) {
      if (attempt >= tries || !/address already in use/i.test((error as Error).message)) throw error;
    }
  }
}
