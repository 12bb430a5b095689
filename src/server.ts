// The only file that reads process.env and listens.
import { createGateway } from './app.js';
import { GATEWAY_VERSION, routeTables } from './generated/routes.js';

const env = process.env;
const port = integerEnv('PORT', 8080);
const host = env['HOST'] || '127.0.0.1';

function integerEnv(name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    process.stderr.write(`${name} must be a non-negative integer, got ${JSON.stringify(raw.slice(0, 40))}\n`);
    process.exit(1);
  }
  return value;
}

let gateway;
try {
  gateway = createGateway(routeTables, {
    env,
    version: GATEWAY_VERSION,
    maxBodyBytes: integerEnv('MAX_BODY_BYTES', 16 * 1024 * 1024),
    maxUpstreamBodyBytes: integerEnv('MAX_UPSTREAM_BODY_BYTES', 64 * 1024 * 1024),
    warn: (message) => process.stderr.write(`warning: ${message}\n`),
  });
} catch (error) {
  process.stderr.write(`cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}

const server = gateway.app.listen(port, host, () => {
  const address = server.address();
  const where = typeof address === 'object' && address ? `${address.address}:${address.port}` : `${host}:${port}`;
  process.stdout.write(`chat-routing-gateway ${GATEWAY_VERSION} listening on http://${where} (routes sha256 ${routeTables.sourceSha256.slice(0, 12)})\n`);
});
server.on('error', (error) => {
  process.stderr.write(`cannot listen on ${host}:${port}: ${error.message}\n`);
  process.exit(1);
});
