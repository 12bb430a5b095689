// The only file that reads process.env and listens.
import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { pino } from 'pino';
import { createGateway } from './app.js';
import { runClusterPrimary } from './cluster-primary.js';
import { answerClientError, refuseConnect } from './caller/client-error.js';
import { SOCKET_HIGH_WATER_MARK } from './wire/high-water-mark.js';
import { GATEWAY_VERSION, routeTables } from './generated/routes.js';
import { batchedLogOutput, type LogOutput } from './observe/log-destination.js';
import { prettyDestination, resolveLogFormat } from './observe/log-format.js';
import { ConfigError, readServerConfig, type ServerConfig } from './server-config.js';
import type { Telemetry } from './trace/telemetry.js';

/** How long a stopping gateway waits for queued spans to reach the collector. */
const TELEMETRY_FLUSH_MS = 2000;

let config: ServerConfig;
try {
  config = readServerConfig(process.env, { callersDeclared: Object.keys(routeTables.callers).length > 0 });
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`chat-routing-gateway: ${error.message}\n`);
  process.exit(1);
}

// JSON lines are batched (docs/observability.md); a person at a terminal gets each readable line at once.
const logOutput: LogOutput | null = resolveLogFormat(config.logFormat, process.stdout.isTTY === true) === 'json' ? batchedLogOutput() : null;
const logger = pino(
  { level: config.logLevel, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
  logOutput?.stream ?? prettyDestination(process.stdout),
);

if (config.workers > 1 && cluster.isPrimary) {
  // The workers run this same file (cluster.isWorker) and share the one listening socket the primary holds.
  runClusterPrimary({
    workers: config.workers,
    shutdownGraceMs: config.shutdownGraceMs,
    logger,
    onListening: (address) => announce(address.address ?? config.host, address.port ?? config.port, address.addressType === 6),
  });
} else {
  await serve();
}

/** The start-up line: printed once, by the primary under node:cluster, when the service is ready. */
function announce(address: string, port: number, ipv6: boolean): void {
  const where = `${ipv6 ? `[${address}]` : address}:${port}`;
  const workers = config.workers > 1 ? `, ${config.workers} workers` : '';
  // Plain text on stdout first, for a person at a terminal and for scripts that wait for it.
  process.stdout.write(`chat-routing-gateway ${GATEWAY_VERSION} listening on http://${where} (routes sha256 ${routeTables.sourceSha256.slice(0, 12)}${workers})\n`);
  logger.info({ address: where, version: GATEWAY_VERSION, routes_sha256: routeTables.sourceSha256, anonymous: config.callerKeys.length === 0 && Object.keys(routeTables.callers).length === 0, workers: config.workers }, 'listening');
}

/** One gateway listening: the whole service with WORKERS=1, one cluster worker otherwise. */
async function serve(): Promise<void> {
  let gateway: ReturnType<typeof createGateway>;
  let telemetry: Telemetry | undefined;
  try {
    // Loaded only when configured: without OTEL_* variables the SDK is never imported and no exporter exists.
    if (config.tracing) {
      const { startTelemetry } = await import('./trace/start-telemetry.js');
      telemetry = startTelemetry(config.tracing, { version: GATEWAY_VERSION });
      const where = (target: { url: string; protocol: string } | null) => (target ? `${new URL(target.url).origin} (${target.protocol})` : null);
      logger.info({ traces: where(config.tracing.traces), metrics: where(config.tracing.metrics), service_name: config.tracing.serviceName }, 'opentelemetry on');
    }
    gateway = createGateway(routeTables, {
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
      clusterWorker: cluster.isWorker,
      ...(telemetry ? { telemetry } : {}),
    });
  } catch (error) {
    process.stderr.write(`chat-routing-gateway: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }

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
    },
    gateway.app,
  );
  // Expect: 100-continue: invite the body only once the headers pass, not at once as Node would.
  server.on('checkContinue', gateway.checkContinue);

  // Node's own early refusals (400, 408, 413, 431) and CONNECT are answered in the envelope too.
  server.on('clientError', answerClientError(config));
  server.on('connect', refuseConnect);

  server.listen(config.port, config.host, () => {
    const address = server.address();
    // A provider base URL that is this very address would loop (each worker checks its own view; a warning only).
    if (typeof address === 'object' && address) void gateway.listening(address);
    if (cluster.isWorker) return; // the primary announces the service
    if (typeof address === 'object' && address) announce(address.address, address.port, address.family === 'IPv6');
    else announce(config.host, config.port, false);
  });
  server.on('error', (error) => {
    process.stderr.write(`chat-routing-gateway: cannot listen on ${config.host}:${config.port}: ${error.message}\n`);
    process.exit(1);
  });

  let shuttingDown = false;
  async function shutdown(signal: string): Promise<void> {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal, grace_ms: config.shutdownGraceMs }, 'draining');
    // The listener stays open through the grace period: a probe or a late request gets 503 and `Connection: close`
    // (a load balancer's cue to go elsewhere), not a refused connection that looks like a crash.
    server.closeIdleConnections();
    const { forcedStops } = await gateway.drain(config.shutdownGraceMs);
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
  // A closed terminal or a supervisor's reload: drained like SIGTERM, never Node's default of dying mid-stream.
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
}
