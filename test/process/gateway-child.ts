// A gateway process on routes of the test's own (GATEWAY_ROUTES_YAML, compiled here; dist/ is not touched), for
// tests that need a process of its own (a heap limit, a crash to survive) with providers dist/server.js cannot
// point at. Run as `node --import=tsx test/helpers/gateway-child.ts`; prints "listening on http://…" like server.ts.
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { compileRoutes } from '../../scripts/routes/compile-routes.js';
import { createGateway } from '../../src/app.js';
import { CONFIG_DEFAULTS } from '../../src/server-config.js';

const compiled = compileRoutes(process.env['GATEWAY_ROUTES_YAML'] ?? '');
if (!compiled.ok) throw new Error(`routes do not compile: ${JSON.stringify(compiled.problems)}`);
const gateway = createGateway(compiled.tables, {
  env: process.env,
  version: '0.0.0-test',
  maxBodyBytes: CONFIG_DEFAULTS.maxBodyBytes,
  // The test's own bound when it sets one (a hostile provider against a small limit).
  maxUpstreamBodyBytes: Number(process.env['MAX_UPSTREAM_BODY_BYTES'] ?? CONFIG_DEFAULTS.maxUpstreamBodyBytes),
  callerKeys: [],
  logger: pino({ level: 'info' }),
});
const server = gateway.app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
