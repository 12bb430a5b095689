// The only file that reads process.env and listens.
import cluster from 'node:cluster';
import { createServer, type Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import { pino, type Logger } from 'pino';
import { runClusterPrimary } from './cluster-primary.js';
import { isClusterMessage, LISTENER_CLOSED, RETIRE, WORKER_FAILED, WORKER_READY, type ListenerClosed, type WorkerFailed, type WorkerReady } from './cluster-messages.js';
import { selfCheckHealth } from './self-check.js';
import { answerClientError, refuseConnect } from './caller/client-error.js';
import { SOCKET_HIGH_WATER_MARK } from './wire/high-water-mark.js';
import type { RouteTables } from './generated/types/route-tables.js';
import { batchedLogOutput, type LogOutput } from './observe/log-destination.js';
import { prettyDestination, resolveLogFormat } from './observe/log-format.js';
import { ConfigError, readServerConfig, type ServerConfig } from './server-config.js';
import { workerExecArgv } from './worker-node-options.js';
import type { Telemetry } from './trace/telemetry.js';

/** How long a stopping gateway waits for queued spans to reach the collector. */
const TELEMETRY_FLUSH_MS = 2000;

/** What a worker could not get past at start-up: one line, printed by the primary (or sent to it during a reload). */
class StartError extends Error {
  override name = 'StartError';
}

/** The compiled roster and version: the part of dist/ that a rebuild changes most. */
interface Build {
  readonly GATEWAY_VERSION: string;
  readonly routeTables: RouteTables;
}

// The primary always runs (docs/reloading.md): it holds the port, the callers' counts and the aggregated metrics,
// and on SIGHUP starts workers from the dist/ now on disk. Workers run this same file (cluster.isWorker).
let retireRequested = false;
let retire: (() => void) | null = null;
if (cluster.isWorker) {
  process.on('message', (message) => {
    if (!isClusterMessage(message, RETIRE)) return;
    if (retire) retire();
    else retireRequested = true; // not listening yet: retire as soon as it is
  });
  // A reload is the primary's business; a hang-up sent to the whole process group must not stop the workers under it.
  process.on('SIGHUP', () => {});
}

try {
  await main();
} catch (error) {
  refuseToStart(error instanceof StartError || error instanceof ConfigError ? error.message : `cannot start: ${messageOf(error)}`);
}

async function main(): Promise<void> {
  // Loaded, not imported: a worker whose build is broken can then say why in one line.
  let build: Build;
  try {
    build = await import('./generated/routes.js');
  } catch (error) {
    throw new StartError(loadFailure('dist/generated/routes.js', error));
  }
  const config = readServerConfig(process.env, { callersDeclared: Object.keys(build.routeTables.callers).length > 0 });
  // JSON lines are batched (docs/observability.md); a person at a terminal gets each readable line at once.
  const logOutput: LogOutput | null = resolveLogFormat(config.logFormat, process.stdout.isTTY === true) === 'json' ? batchedLogOutput() : null;
  const logger = pino(
    { level: config.logLevel, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
    logOutput?.stream ?? prettyDestination(process.stdout),
  );
  if (cluster.isPrimary) {
    // One worker needs no balancing: it accepts from the shared socket itself, which keeps the primary off the path
    // of every connection (Node's default on Linux, round-robin, has the primary accept each one and pass it over IPC).
    // During a reload the new and the old worker share the socket until the old one closes its copy.
    if (config.workers === 1 && !process.env['NODE_CLUSTER_SCHED_POLICY']) cluster.schedulingPolicy = cluster.SCHED_NONE;
    cluster.setupPrimary({ execArgv: workerExecArgv(process.execArgv, process.env['NODE_OPTIONS']) });
    runClusterPrimary({
      workers: config.workers,
      shutdownGraceMs: config.shutdownGraceMs,
      reloadTimeoutMs: config.reloadTimeoutMs,
      version: build.GATEWAY_VERSION,
      logger,
      onListening: (address) => announce(build, config, logger, address.address ?? config.host, address.port ?? config.port, address.addressType === 6),
      onStartFailed: (reason) => refuseToStart(reason),
    });
  } else {
    await serve(build, config, logger, logOutput);
  }
}

/** The start-up line: printed once, by the primary, when the first worker listens. */
function announce(build: Build, config: ServerConfig, logger: Logger, address: string, port: number, ipv6: boolean): void {
  const where = `${ipv6 ? `[${address}]` : address}:${port}`;
  const workers = config.workers > 1 ? `, ${config.workers} workers` : '';
  const { GATEWAY_VERSION, routeTables } = build;
  // Plain text on stdout first, for a person at a terminal and for scripts that wait for it.
  process.stdout.write(`chat-routing-gateway ${GATEWAY_VERSION} listening on http://${where} (routes sha256 ${routeTables.sourceSha256.slice(0, 12)}${workers})\n`);
  logger.info({ address: where, version: GATEWAY_VERSION, routes_sha256: routeTables.sourceSha256, anonymous: config.callerKeys.length === 0 && Object.keys(routeTables.callers).length === 0, workers: config.workers, primary_pid: process.pid }, 'listening');
}

/** One cluster worker: builds the gateway, answers its own /health, then listens on the port the primary shares. */
async function serve(build: Build, config: ServerConfig, logger: Logger, logOutput: LogOutput | null): Promise<void> {
  const { GATEWAY_VERSION, routeTables } = build;
  let telemetry: Telemetry | undefined;
  let createGateway: typeof import('./app.js').createGateway;
  try {
    ({ createGateway } = await import('./app.js'));
  } catch (error) {
    throw new StartError(loadFailure('dist/app.js (or a file it imports)', error));
  }
  // Loaded only when configured: without OTEL_* variables the SDK is never imported and no exporter exists.
  if (config.tracing) {
    const { startTelemetry } = await import('./trace/start-telemetry.js');
    telemetry = startTelemetry(config.tracing, { version: GATEWAY_VERSION });
    const where = (target: { url: string; protocol: string } | null) => (target ? `${new URL(target.url).origin} (${target.protocol})` : null);
    logger.info({ traces: where(config.tracing.traces), metrics: where(config.tracing.metrics), service_name: config.tracing.serviceName }, 'opentelemetry on');
  }
  const gateway = createGateway(routeTables, {
    env: process.env,
    version: GATEWAY_VERSION,
    maxBodyBytes: config.maxBodyBytes,
    maxUpstreamBodyBytes: config.maxUpstreamBodyBytes,
    maxJsonDepth: config.maxJsonDepth,
    maxJsonValues: config.maxJsonValues,
    maxBodyBytesInFlight: config.maxBodyBytesInFlight,
    maxStreamBytesInFlight: config.maxStreamBytesInFlight,
    callerKeys: config.callerKeys,
    redisUrl: config.redisUrl,
    corsOrigins: config.corsOrigins,
    logger,
    logLinesDropped: logOutput ? () => logOutput.dropped() : undefined,
    processMetrics: true,
    clusterWorker: true,
    ...(telemetry ? { telemetry } : {}),
  });

  const server = createServer(
    {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs,
      // Node checks the two timeouts above only this often (30 s by default): check every second.
      connectionsCheckingInterval: 1000,
      // Let a Host-less HTTP/1.1 request reach the app, which refuses it in the envelope (Node's own 400 is bare).
      requireHostHeader: false,
      highWaterMark: SOCKET_HIGH_WATER_MARK,
      ...gateway.serverClasses,
    },
    gateway.app,
  );
  // Expect: 100-continue: invite the body only once the headers pass, not at once as Node would.
  server.on('checkContinue', gateway.checkContinue);

  // Node's own early refusals (400, 408, 413, 431) and CONNECT are answered in the envelope too.
  server.on('clientError', answerClientError(config));
  server.on('connect', refuseConnect);

  // Ready means answering: a build that cannot serve its own /health never takes a connection.
  const problem = await selfCheckHealth(server);
  if (problem) throw new StartError(problem);

  // The backlog travels with the listen request to the primary under node:cluster, which listens with it (both policies).
  server.listen({ port: config.port, host: config.host, backlog: config.listenBacklog }, () => {
    const address = server.address();
    // A provider base URL that is this very address would loop (each worker checks its own view; a warning only).
    if (typeof address === 'object' && address) void gateway.listening(address);
    const ready: WorkerReady = { type: WORKER_READY, version: GATEWAY_VERSION, routes_sha256: routeTables.sourceSha256 };
    process.send?.(ready);
    retire = () => retireAfterReload();
    if (retireRequested) retire();
  });
  server.on('error', (error) => refuseToStart(`cannot listen on ${config.host}:${config.port}: ${error.message}`));

  let shuttingDown = false;
  async function shutdown(signal: string, graceMs = config.shutdownGraceMs): Promise<void> {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal, grace_ms: graceMs }, 'draining');
    // The listener stays open through the grace period: a probe or a late request gets 503 and `Connection: close`
    // (a load balancer's cue to go elsewhere), not a refused connection that looks like a crash.
    server.closeIdleConnections();
    const { forcedStops } = await gateway.drain(graceMs);
    server.close();
    server.closeAllConnections();
    gateway.close();
    await telemetry?.shutdown(TELEMETRY_FLUSH_MS);
    logger.info({ forced_stops: forcedStops }, 'stopped');
    logOutput?.flushNow();
    process.exit(0);
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  /**
   * New workers serve now: take no new connection, answer what arrives on the open ones with `Connection: close`
   * (the caller's next request reconnects, to a new worker), let requests and streams finish within the grace period
   * (then the drain rules apply), and exit once the last connection has closed.
   */
  let retiring = false;
  function retireAfterReload(): void {
    if (retiring || shuttingDown) return;
    retiring = true;
    const deadline = Date.now() + config.shutdownGraceMs;
    logger.info({ grace_ms: config.shutdownGraceMs }, 'retiring');
    server.prependListener('request', (_req, res) => res.setHeader('connection', 'close'));
    // net's close, not http's: http.Server#close also cuts idle keep-alive connections, on which a caller may be
    // sending its next request right now. Idle ones end at KEEP_ALIVE_TIMEOUT_MS, or at the end of the grace period.
    // Under node:cluster this removes only this worker from the shared socket; the new workers keep it open.
    const lastConnectionClosed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    const primarySawTheClose = new Promise<void>((resolve) => {
      const echoed = (message: unknown) => {
        if (!isClusterMessage(message, LISTENER_CLOSED)) return;
        process.off('message', echoed);
        resolve();
      };
      process.on('message', echoed);
      const closed: ListenerClosed = { type: LISTENER_CLOSED };
      process.send?.(closed);
    });
    void Promise.all([lastConnectionClosed, primarySawTheClose]).then(() => shutdown('retired', Math.max(0, deadline - Date.now())));
    setTimeout(() => void shutdown('retired', 0), config.shutdownGraceMs).unref();
  }
}

/** Exits 1 with one line: on stderr, or, in a worker, sent to the primary, which prints or logs it. */
function refuseToStart(reason: string): void {
  if (cluster.isWorker && process.connected) {
    const failed: WorkerFailed = { type: WORKER_FAILED, reason };
    process.send!(failed, undefined, undefined, () => process.exit(1));
    return;
  }
  process.stderr.write(`chat-routing-gateway: ${reason}\n`);
  process.exit(1);
}

/** A module that failed to load: Node's message names a missing file, but not the file a SyntaxError is in. */
function loadFailure(file: string, error: unknown): string {
  return `cannot load the build: ${file}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
