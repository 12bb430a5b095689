import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createGateway } from '../../src/app.js';
import { compileRoutes } from '../../scripts/routes/compile-routes.js';
import type { CorsOrigins } from '../../src/caller/cors.js';
import type { LingerBounds } from '../../src/caller/linger.js';
import type { Telemetry } from '../../src/trace/telemetry.js';

/** The routes file most engine tests run on: real YAML through the real compiler. */
export const GATEWAY_ROUTES = readFileSync(new URL('../fixtures/gateway-routes.yaml', import.meta.url), 'utf8');

export const PROVIDER_KEY = 'sk-provider-key-for-tests-7f3a';

export interface RunningGateway {
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  /** Every line the gateway logged, raw, in order. */
  readonly logLines: string[];
  /** The `msg` of every warning logged. */
  readonly warnings: string[];
  /** The log lines of finished requests, parsed. */
  requestLogs(): Record<string, unknown>[];
  /** The request line of this x-request-id once it is written (lines are written after the answer ends). */
  requestLog(requestId: string): Promise<Record<string, unknown>>;
  /** Resolves with what `find` returns once it returns something, looking again at each new log line; rejects after `timeoutMs`. */
  logged<T>(find: () => T | undefined, timeoutMs?: number): Promise<T>;
  drain(graceMs: number): Promise<{ forcedStops: number }>;
  /** Responses not closed and handlers not settled (0 and 0 when nothing leaks). */
  tracked(): { inFlight: number; stopHooks: number };
  post(body: unknown, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

export interface GatewayTestOptions {
  readonly routes?: string;
  /** The mock provider's origin: every fixture provider's base_url_env points there. */
  readonly upstreamOrigin?: string;
  readonly env?: Record<string, string>;
  readonly maxBodyBytes?: number;
  readonly maxUpstreamBodyBytes?: number;
  /** MAX_BODY_BYTES_IN_FLIGHT; default: the gateway's. */
  readonly maxBodyBytesInFlight?: number;
  /** MAX_STREAM_BYTES_IN_FLIGHT; default: the gateway's. */
  readonly maxStreamBytesInFlight?: number;
  readonly callerKeys?: readonly string[];
  readonly corsOrigins?: CorsOrigins;
  /** Callers' counts in this Redis (REDIS_URL). */
  readonly redisUrl?: string;
  readonly telemetry?: Telemetry;
  /** The lingering close's bounds; default: the gateway's. */
  readonly linger?: LingerBounds;
}

/** Compiles routes YAML, builds the app and listens on port 0 of loopback. */
export async function startGateway(options: GatewayTestOptions = {}): Promise<RunningGateway> {
  const compiled = compileRoutes(options.routes ?? GATEWAY_ROUTES);
  if (!compiled.ok) throw new Error(`test routes do not compile: ${JSON.stringify(compiled.problems)}`);
  const logLines: string[] = [];
  const onLine = new Set<() => void>();
  const logger = pino(
    { level: 'info' },
    {
      write: (line: string) => {
        logLines.push(line);
        for (const look of onLine) look();
      },
    },
  );
  const upstream = options.upstreamOrigin ?? 'http://127.0.0.1:9';
  const gateway = createGateway(compiled.tables, {
    env: { MOCK_BASE_URL: `${upstream}/v1`, MOCK_API_KEY: PROVIDER_KEY, ...options.env },
    version: '0.0.0-test',
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    maxUpstreamBodyBytes: options.maxUpstreamBodyBytes ?? 8 * 1024 * 1024,
    callerKeys: options.callerKeys ?? [],
    ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
    ...(options.maxBodyBytesInFlight ? { maxBodyBytesInFlight: options.maxBodyBytesInFlight } : {}),
    ...(options.maxStreamBytesInFlight ? { maxStreamBytesInFlight: options.maxStreamBytesInFlight } : {}),
    ...(options.redisUrl ? { redisUrl: options.redisUrl } : {}),
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
    ...(options.linger ? { linger: options.linger } : {}),
    logger,
  });
  const server = gateway.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const parsed = () => logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
  const requestLogs = () => parsed().filter((line) => line['msg'] === 'request');
  const logged = <T>(find: () => T | undefined, timeoutMs = 10_000) =>
    new Promise<T>((resolve, reject) => {
      const look = () => {
        const found = find();
        if (found === undefined) return;
        stop();
        resolve(found);
      };
      const timer = setTimeout(() => {
        stop();
        reject(new Error(`not logged within ${timeoutMs} ms:\n${logLines.join('')}`));
      }, timeoutMs);
      const stop = () => {
        clearTimeout(timer);
        onLine.delete(look);
      };
      onLine.add(look);
      look();
    });
  return {
    origin,
    logLines,
    get warnings() {
      return parsed().filter((line) => line['level'] === 40).map((line) => String(line['msg']));
    },
    requestLogs,
    requestLog: (requestId) => logged(() => requestLogs().find((line) => line['request_id'] === requestId)),
    logged,
    drain: (graceMs) => gateway.drain(graceMs),
    tracked: () => gateway.tracked(),
    post: (body, headers = {}) =>
      fetch(`${origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    close: () =>
      new Promise<void>((resolve) => {
        gateway.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The nine-field envelope, read from a response. */
export async function envelopeOf(response: Response): Promise<Record<string, unknown>> {
  const body = (await response.json()) as { error: Record<string, unknown> };
  return body.error;
}
