// Node's process metrics on /metrics: prom-client's defaults, less those that walk every handle on the event loop
// at each scrape, with process_open_fds counted off it.
import { closeSync, openSync, readdirSync } from 'node:fs';
import { Registry } from 'prom-client';
import t from 'tap';
import { registerProcessMetrics } from '../../src/observe/process-metrics.js';
import { parseExposition, valueOf } from '../helpers/prometheus.js';

const registry = new Registry();
registerProcessMetrics(registry);
const scrape = async () => parseExposition(await registry.metrics());

t.test('process_open_fds counts the open descriptors, and follows them', async (t) => {
  const before = valueOf(await scrape(), 'process_open_fds')!;
  // The count lists /proc/self/fd less its own descriptor: about as many as a listing made now (the test runner's
  // own sockets and pipes may come and go in between).
  t.ok(Math.abs(before - (readdirSync('/proc/self/fd').length - 1)) <= 4, `${before} counted`);
  const opened = Array.from({ length: 1500 }, () => openSync('/dev/null', 'r'));
  t.teardown(() => opened.forEach((fd) => closeSync(fd)));
  // More than one batch (1,024) of entries: every batch is counted (give or take the runner's own, as above).
  const after = valueOf(await scrape(), 'process_open_fds')!;
  t.ok(Math.abs(after - before - 1500) <= 4, `${after - before} more after opening 1,500`);
});

t.test('the per-handle metrics are gone; the rest of the defaults stay', async (t) => {
  const names = new Set((await scrape()).map((sample) => sample.name));
  for (const gone of ['nodejs_active_handles', 'nodejs_active_handles_total', 'nodejs_active_resources', 'nodejs_active_resources_total']) t.notOk(names.has(gone), gone);
  for (const kept of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_max_fds', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_heap_size_used_bytes', 'nodejs_active_requests_total']) t.ok(names.has(kept), kept);
});
