// One gateway for `npm run bench:callers`, forked with IPC: the bench's routes with or without a limited caller
// (BENCH_CALLERS=none|limits), counted in Redis when REDIS_URL is set. Sends its port when listening; answers
// 'cpu' with its process.cpuUsage() so the bench charges the gateway's own CPU per request.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { compileRoutes } from '../routes/compile-routes.js';
import { createGateway } from '../../src/app.js';
import { benchCallersRoutes } from './callers-routes.js';

const compiled = compileRoutes(benchCallersRoutes(process.env['BENCH_CALLERS'] === 'limits'));
if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
const gateway = createGateway(compiled.tables, {
  env: process.env,
  version: 'bench',
  maxBodyBytes: 1024 * 1024,
  maxUpstreamBodyBytes: 8 * 1024 * 1024,
  callerKeys: [],
  // Log lines are written as in production (one per request), to a sink, so the bench measures the same work.
  logger: pino({ level: 'info' }, { write: () => {} }),
  ...(process.env['REDIS_URL'] ? { redisUrl: process.env['REDIS_URL'] } : {}),
});
const server = createServer({ keepAliveTimeout: 600_000 }, gateway.app);
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
process.on('message', (message) => {
  if (message === 'cpu') process.send?.({ cpu: process.cpuUsage() });
});
process.on('disconnect', () => process.exit(0));
