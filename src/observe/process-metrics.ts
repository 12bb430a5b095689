import { opendir } from 'node:fs/promises';
import { Gauge, collectDefaultMetrics, type Registry, type RegistryContentType } from 'prom-client';

/**
 * prom-client's defaults that walk every handle, resource or descriptor of the process on the event loop at each
 * scrape. At 10,000 open streams (20,000 sockets) one scrape held the worker for ~45 ms (CPU profile of
 * bench:streams): every request and stream waited that long. Handles and resources are the sockets again here;
 * the descriptors' count is kept, counted off the event loop (below).
 */
const WALK_EVERY_HANDLE = ['nodejs_active_handles', 'nodejs_active_handles_total', 'nodejs_active_resources', 'nodejs_active_resources_total', 'process_open_fds'];
/** Descriptors read per trip to libuv's threads: the event loop takes one batch at a time. */
const FDS_PER_BATCH = 1024;

/** Node's process metrics (prom-client's defaults) in `registry`, with `process_open_fds` counted off the event loop. */
export function registerProcessMetrics(registry: Registry<RegistryContentType>): void {
  collectDefaultMetrics({ register: registry });
  for (const name of WALK_EVERY_HANDLE) registry.removeSingleMetric(name);
  if (process.platform !== 'linux') return;
  new Gauge({
    name: 'process_open_fds',
    help: 'Number of open file descriptors.',
    registers: [registry],
    async collect() {
      const count = await openFiles();
      if (count !== undefined) this.set(count);
    },
  });
}

/** The entries of /proc/self/fd, less the one the count itself holds open; undefined when they cannot be read. */
async function openFiles(): Promise<number | undefined> {
  try {
    let count = 0;
    for await (const _entry of await opendir('/proc/self/fd', { bufferSize: FDS_PER_BATCH })) count++;
    return count - 1;
  } catch {
    return undefined;
  }
}
