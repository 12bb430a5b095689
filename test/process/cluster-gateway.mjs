// `WORKERS=2` as server.ts runs it (the same runClusterPrimary and createGateway from the build in dist/), but on
// compiled tables given as JSON in ROUTE_TABLES, so a test can give the cluster callers the project's routes.yaml does
// not declare. Plain JavaScript on dist/, so each worker starts without a TypeScript loader. Started by
// test/process/callers-cluster.test.ts (npm test builds dist/ first).
import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { pino } from 'pino';
import { createGateway } from '../../dist/app.js';
import { runClusterPrimary } from '../../dist/cluster-primary.js';

const logger = pino({ base: { pid: process.pid } });
if (cluster.isPrimary) {
  runClusterPrimary({
    workers: 2,
    shutdownGraceMs: 1000,
    logger,
    onListening: (address) => process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`),
  });
} else {
  const gateway = createGateway(JSON.parse(process.env.ROUTE_TABLES ?? '{}'), {
    env: process.env,
    version: '0.0.0-test',
    maxBodyBytes: 1024 * 1024,
    maxUpstreamBodyBytes: 1024 * 1024,
    callerKeys: [],
    logger,
    clusterWorker: true,
  });
  createServer(gateway.app).listen(0, '127.0.0.1');
  process.on('SIGTERM', () => process.exit(0));
}
