// The only file that reads process.env and listens.
import { createServer } from 'node:http';
import { pino } from 'pino';
import { createGateway } from './app.js';
import { GATEWAY_VERSION, routeTables } from './generated/routes.js';
import { ConfigError, readServerConfig, type ServerConfig } from './server-config.js';

let config: ServerConfig;
try {
  config = readServerConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`chat-routing-gateway: ${error.message}\n`);
  process.exit(1);
}

const logger = pino({ level: config.logLevel, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });

let gateway: ReturnType<typeof createGateway>;
try {
  gateway = createGateway(routeTables, {
    env: process.env,
    version: GATEWAY_VERSION,
    maxBodyBytes: config.maxBodyBytes,
    maxUpstreamBodyBytes: config.maxUpstreamBodyBytes,
    callerKeys: config.callerKeys,
    logger,
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
  },
  gateway.app,
);

server.listen(config.port, config.host, () => {
  const address = server.address();
  const where = typeof address === 'object' && address ? `${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}` : `${config.host}:${config.port}`;
  // Plain text on stdout first, for a person at a terminal and for scripts that wait for it.
  process.stdout.write(`chat-routing-gateway ${GATEWAY_VERSION} listening on http://${where} (routes sha256 ${routeTables.sourceSha256.slice(0, 12)})\n`);
  logger.info({ address: where, version: GATEWAY_VERSION, routes_sha256: routeTables.sourceSha256, anonymous: config.callerKeys.length === 0 }, 'listening');
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
  server.close();
  server.closeIdleConnections();
  const { forcedStops } = await gateway.drain(config.shutdownGraceMs);
  server.closeAllConnections();
  gateway.close();
  logger.info({ forced_stops: forcedStops }, 'stopped');
  logger.flush();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
