// `WORKERS=2` as server.ts runs it (the same runClusterPrimary and createGateway), but on the routes YAML in ROUTES_YAML,
// so a test can give the cluster callers the project's routes.yaml does not declare. Started by test/callers-cluster.test.ts.
import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { pino } from 'pino';
import { compileRoutes } from '../../scripts/routes/compile-routes.js';
import { createGateway } from '../../src/app.js';
import { runClusterPrimary } from '../../src/cluster-primary.js';

const logger = pino({ base: { pid: process.pid } });
if (cluster.isPrimary) {
  runClusterPrimary({
    workers: 2,
    shutdownGraceMs: 1000,
    logger,
    onListening: (address) => process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`),
  });
} else {
  const compiled = compileRoutes(process.env['ROUTES_YAML'] ?? '');
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  const gateway = createGateway(compiled.tables, {
    env: process.env,
    version: '0.0.0-test',
    maxBodyBytes: 1024 * 1024,
    maxUpstreamBodyBytes: 1024 * 1024,
    callerKeys: [],
    logger,
    clusterWorker: true,
    ...(process.env['REDIS_URL'] ? { redisUrl: process.env['REDIS_URL'] } : {}),
  });
  createServer(gateway.app).listen(0, '127.0.0.1');
  process.on('SIGTERM', () => process.exit(0));
}
