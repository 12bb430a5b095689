// The gateway under soak: src/app.ts on soak-routes.yaml (compiled here, in-process; dist/ is not touched),
// served with the same node:http options as src/server.ts, on 127.0.0.1 and a free port.
// Run by soak.ts as `node --expose-gc --import tsx scripts/soak/gateway-child.ts`, in its own process so its RSS and
// sockets can be read from /proc. Prints "listening on port N". Logs (pino, info) go to SOAK_LOG_FILE.
// Over its IPC channel it answers "stats" with what it still tracks and its heap after full GCs.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { destination as pinoDestination, pino } from 'pino';
import { createGateway } from '../../src/app.js';
import { CONFIG_DEFAULTS } from '../../src/server-config.js';
import { loadSoakRoutes } from './common.js';

const { tables } = loadSoakRoutes();
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
const destination = pinoDestination({ dest: process.env['SOAK_LOG_FILE'] || '/dev/null', sync: false });
const logger = pino({ level: process.env['LOG_LEVEL'] || 'info', base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, destination);

const gateway = createGateway(tables, {
  env: process.env,
  version,
  maxBodyBytes: CONFIG_DEFAULTS.maxBodyBytes,
  maxUpstreamBodyBytes: CONFIG_DEFAULTS.maxUpstreamBodyBytes,
  callerKeys: [],
  logger,
  processMetrics: true,
});

const server = createServer(
  {
    headersTimeout: CONFIG_DEFAULTS.headersTimeoutMs,
    requestTimeout: CONFIG_DEFAULTS.requestTimeoutMs,
    keepAliveTimeout: CONFIG_DEFAULTS.keepAliveTimeoutMs,
    connectionsCheckingInterval: 1000,
  },
  gateway.app,
);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`soak gateway listening on port ${(server.address() as AddressInfo).port}\n`);
});

/** What soak.ts asks over IPC (no socket of its own, so the gateway's sockets stay the only TCP ones). */
export interface ChildStats {
  readonly inFlight: number;
  readonly stopHooks: number;
  /** process.memoryUsage().heapUsed after full garbage collections. */
  readonly heapUsedAfterGc: number;
  /** process.memoryUsage().arrayBuffers (Buffers: bodies in flight live there) after the same GCs. */
  readonly arrayBuffersAfterGc: number;
  /** process.memoryUsage().heapTotal after the same GCs: V8 keeps heap it no longer uses committed (resident). */
  readonly heapTotalAfterGc: number;
}

process.on('message', (message) => {
  if (message !== 'stats') return;
  const gc = (globalThis as { gc?: () => void }).gc;
  // Several passes: what one frees (closures, weak maps) may only let the next one free the rest.
  for (let i = 0; i < 4 && gc; i++) gc();
  const memory = process.memoryUsage();
  const stats: ChildStats = {
    ...gateway.tracked(),
    heapUsedAfterGc: gc ? memory.heapUsed : Number.NaN,
    arrayBuffersAfterGc: gc ? memory.arrayBuffers : Number.NaN,
    heapTotalAfterGc: gc ? memory.heapTotal : Number.NaN,
  };
  process.send?.(stats);
});

process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  gateway.close();
  destination.flushSync();
  process.exit(0);
});
