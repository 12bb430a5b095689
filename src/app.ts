import type { RequestListener } from 'node:http';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { ModelTable, RouteTables } from './generated/types/route-tables.js';
import { callerAuth, namedCallerAuth } from './caller/caller-auth.js';
import { BodyBudget, BUDGET_BYTES_PER_VALUE } from './caller/body-budget.js';
import { chatCompletionsHandler } from './endpoints/chat-completions.js';
import { embeddingsHandler } from './endpoints/embeddings.js';
import { responsesHandler, responsesNotStored } from './endpoints/responses/index.js';
import { anthropicErrorShape, countTokensHandler, messagesHandler } from './endpoints/messages/index.js';
import { requireHostHeader } from './caller/client-error.js';
import { cors, type CorsOrigins } from './caller/cors.js';
import { deferContinue } from './caller/expect-continue.js';
import { gatewayIdOf, loopGuard } from './caller/loop-guard.js';
import { GatewayError, gatewayError } from './wire/gateway-error.js';
import { Lifecycle } from './caller/lifecycle.js';
import { lingerAfterEarlyAnswer, LINGER_DEFAULTS, type LingerBounds } from './caller/linger.js';
import { describeError } from './observe/log-fields.js';
import { redactGatewayError, type Redact } from './observe/redact-secrets.js';
import { recordOf, requestLog } from './observe/request-log.js';
import { requestIdFor } from './caller/request-id.js';
import { prepareProviders } from './routing/runtime-providers.js';
import { selfPointingWarnings, type ListeningAddress } from './caller/self-address.js';
import { ownViaEntry } from './wire/via.js';
import { sendError } from './caller/send-error.js';
import { createMetrics } from './observe/metrics.js';
import { createCallerPolicy } from './policy/caller-policy.js';
import { CONFIG_DEFAULTS, defaultBodyBytesInFlight, defaultStreamBytesInFlight } from './server-config.js';
import { serverClassesFor, type ServerClasses } from './server-classes.js';
import { StreamsInFlight } from './dialects/stream-budget.js';
import type { Telemetry } from './trace/telemetry.js';
import { traceRequests } from './trace/request-trace.js';

export interface AppOptions {
  /** Where api_key_env and base_url_env are looked up. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly version: string;
  readonly maxBodyBytes: number;
  readonly maxUpstreamBodyBytes: number;
  /** Bounds checked before a request body is parsed; defaults as in server-config.ts. */
  readonly maxJsonDepth?: number;
  readonly maxJsonValues?: number;
  /** What all request bodies in flight may hold together; default as in server-config.ts. */
  readonly maxBodyBytesInFlight?: number;
  /** What all streams may hold at once; default as in server-config.ts. */
  readonly maxStreamBytesInFlight?: number;
  /** Caller keys; empty serves anonymously (server.ts allows that on loopback only). */
  readonly callerKeys: readonly string[];
  /** Origins browsers may call from (CORS_ORIGINS); absent or empty: no CORS. */
  readonly corsOrigins?: CorsOrigins;
  /** One JSON line per request, and operational warnings. Never keys or content. */
  readonly logger: Logger;
  /** Log lines dropped because stdout stalled (see log-destination.ts), for /metrics. */
  readonly logLinesDropped?: (() => number) | undefined;
  /** Node's process metrics on /metrics too: one gateway per process should (server.ts does). Default false. */
  readonly processMetrics?: boolean;
  /** Set in a node:cluster worker: /metrics then answers the figures of every worker, aggregated by the primary. */
  readonly clusterWorker?: boolean;
  /** REDIS_URL: callers' limits and spend counted there, across instances; absent: in the process (or the cluster primary). */
  readonly redisUrl?: string | null;
  /** OpenTelemetry, when configured (server.ts starts it from OTEL_*); absent: no span, no cost. */
  readonly telemetry?: Telemetry;
  /** How long and how much an early-answered caller's body is read before the socket is cut; default LINGER_DEFAULTS. */
  readonly linger?: LingerBounds;
}

export interface Gateway {
  readonly app: Express;
  /** For http.createServer: requests and responses born on the prototypes Express gives them (server-classes.ts). */
  readonly serverClasses: ServerClasses;
  /** For http.Server's 'checkContinue': `100 Continue` only once the headers pass, so a refusal comes before the body. */
  readonly checkContinue: RequestListener;
  /** Health turns 503, in-flight requests get `graceMs` to finish, the rest answer shutting_down. */
  drain(graceMs: number): Promise<{ forcedStops: number }>;
  /** Releases the keep-alive sockets to providers, and the limit store's connection. */
  close(): void;
  /** Told where the server listens: warns of every provider whose base URL is that address (a loop). Resolves when checked. */
  listening(address: ListeningAddress): Promise<void>;
  /** What the gateway still tracks: responses not closed, and requests still holding a forced-stop hook. Both 0 when idle. */
  tracked(): { inFlight: number; stopHooks: number };
}

/** The whole HTTP surface, built from compiled tables. It never listens: server.ts (or a test) does. */
export function createGateway(tables: RouteTables, options: AppOptions): Gateway {
  const { logger } = options;
  const linger = options.linger ?? LINGER_DEFAULTS;
  const providers = prepareProviders(tables, options.env, `chat-routing-gateway/${options.version}`, (level, message) => logger[level](message));
  for (const warning of providers.warnings) logger.warn(warning);
  // Named in the Via of every upstream call; a request that arrives naming it has looped (loop-guard.ts).
  const gatewayId = gatewayIdOf(tables.sourceSha256, options.env);
  const roster = new Map(Object.entries(tables.models).filter((entry): entry is [string, ModelTable] => entry[1] !== undefined));
  const lifecycle = new Lifecycle();
  const policy = createCallerPolicy(tables, { env: options.env, redisUrl: options.redisUrl ?? null, clusterWorker: options.clusterWorker ?? false, logger });
  if (policy.named && options.callerKeys.length > 0) {
    throw new Error('routes.yaml declares callers and GATEWAY_API_KEYS (or GATEWAY_API_KEYS_FILE) is set: use one or the other');
  }
  const metrics = createMetrics({
    inFlight: () => lifecycle.inFlight,
    providers: [...providers.byId.values()],
    logLinesDropped: options.logLinesDropped,
    processMetrics: options.processMetrics ?? false,
    clusterWorker: options.clusterWorker ?? false,
    ...(policy.storeUp ? { limitStoreUp: policy.storeUp } : {}),
    callerSpend: policy.spend,
    ...(options.telemetry ? { spansDropped: options.telemetry.spansDropped } : {}),
    sunsets: [...roster].flatMap(([model, table]) => (table.deprecated ? [{ model, sunset: table.deprecated.sunset }] : [])),
  });

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);

  const logRequests = requestLog(logger, requestIdFor, metrics.observe, (model) => roster.has(model));
  const traced = options.telemetry ? traceRequests(options.telemetry) : undefined;
  const corsHeaders = options.corsOrigins && options.corsOrigins.length > 0 ? cors(options.corsOrigins) : undefined;
  const tracked = trackInFlight(lifecycle);
  const identifyCaller = policy.named ? namedCallerAuth((key) => policy.identify(key)) : options.callerKeys.length > 0 ? callerAuth(options.callerKeys) : anonymousCaller;
  const endpoint = {
    plan: { roster, providers: providers.byId, maxAttempts: tables.maxAttempts },
    errors: tables.errors,
    body: bodyLimits(options),
    maxUpstreamBodyBytes: options.maxUpstreamBodyBytes,
    streams: new StreamsInFlight(options.maxStreamBytesInFlight ?? defaultStreamBytesInFlight()),
    lifecycle,
    linger,
    ownVia: ownViaEntry(gatewayId),
    ...(policy.named ? { policy } : {}),
  };
  const refuseLoops = loopGuard(gatewayId);

  // What every request passes first, in this order; the chat route then tracking and caller identity too.
  const common = [logRequests, traced, requireHostHeader, corsHeaders].filter((handler) => handler !== undefined);
  // The chat route first, with only the middleware it needs: one route matched, not a walk through each layer
  // below. Its errors go on to answerError at the end like everybody's.
  app.post('/v1/chat/completions', ...common, tracked, refuseLoops, identifyCaller, chatCompletionsHandler(endpoint));

  app.use(...common);
  // Before trackInFlight: a scrape is not traffic a drain waits for, nor one of the requests in flight it reports.
  app.get('/metrics', metrics.handler);
  app.all('/metrics', methodNotAllowed('GET, HEAD'));
  app.use(tracked);
  app.use('/v1/messages', anthropicErrorShape);
  app.use(refuseLoops);
  app.use(identifyCaller);
  app.all('/v1/chat/completions', methodNotAllowed('POST'));
  app.post('/v1/responses', responsesHandler(endpoint));
  app.all('/v1/responses', methodNotAllowed('POST'));
  app.all('/v1/responses/{*rest}', responsesNotStored);
  app.post('/v1/messages', messagesHandler(endpoint));
  app.all('/v1/messages', methodNotAllowed('POST'));
  app.post('/v1/messages/count_tokens', countTokensHandler(endpoint));
  app.all('/v1/messages/count_tokens', methodNotAllowed('POST'));
  app.post('/v1/embeddings', embeddingsHandler(endpoint));
  app.all('/v1/embeddings', methodNotAllowed('POST'));
  app.all(['/v1/models', '/v1/models/{*rest}'], noModelList);
  app.get('/health', (_req, res) => {
    res.status(lifecycle.draining ? 503 : 200).json({
      status: lifecycle.draining ? 'draining' : 'ok',
      version: options.version,
      models: roster.size,
      routes_sha256: tables.sourceSha256,
      // Which process answered: during a reload, old and new workers (and their builds) answer side by side.
      pid: process.pid,
    });
  });
  app.all('/health', methodNotAllowed('GET, HEAD'));
  app.use((req, _res, next) => {
    next(gatewayError('not_found', `There is no ${req.method} ${sanitizePath(req.path)} on this gateway; the endpoints are POST /v1/chat/completions, /v1/responses, /v1/messages and /v1/embeddings.`));
  });
  app.use(answerError(logger, providers.redact, linger));
  return {
    app,
    serverClasses: serverClassesFor(app),
    checkContinue: deferContinue(app),
    drain: (graceMs) => lifecycle.drain(graceMs),
    close: () => {
      providers.close();
      void policy.close();
    },
    tracked: () => ({ inFlight: lifecycle.inFlight, stopHooks: lifecycle.stopHooks }),
    listening: async (address) => {
      for (const warning of await selfPointingWarnings(providers.byId.values(), address)) logger.warn(warning);
    },
  };
}

function bodyLimits(options: AppOptions) {
  const maxDepth = options.maxJsonDepth ?? CONFIG_DEFAULTS.maxJsonDepth;
  const maxValues = options.maxJsonValues ?? CONFIG_DEFAULTS.maxJsonValues;
  const inFlight = options.maxBodyBytesInFlight ?? defaultBodyBytesInFlight(options.maxBodyBytes + maxValues * BUDGET_BYTES_PER_VALUE);
  return { maxBytes: options.maxBodyBytes, json: { maxDepth, maxValues }, budget: new BodyBudget(inFlight) };
}

/** No model list, by design (SPEC.md): the 404 says where the routing strings are instead. */
const noModelList: RequestHandler = (req, _res, next) => {
  next(
    gatewayError(
      'not_found',
      `There is no ${req.method} ${sanitizePath(req.path)} on this gateway: it has no model list, by design. The routing strings it serves are in its routes.yaml (\`npm run --silent roster\` prints them); use one as \`model\`.`,
    ),
  );
};

/** Without keys every request is the anonymous caller's (log line and metrics). */
const anonymousCaller: RequestHandler = (_req, res, next) => {
  recordOf(res).caller = 'anonymous';
  next();
};

/** Counts requests for the drain; while draining, each response closes its connection so callers reconnect elsewhere. */
function trackInFlight(lifecycle: Lifecycle): RequestHandler {
  return (_req, res, next) => {
    lifecycle.track(res);
    if (lifecycle.draining) res.setHeader('connection', 'close');
    next();
  };
}

function methodNotAllowed(allow: string): RequestHandler {
  return (req, res, next) => {
    res.setHeader('allow', allow);
    next(gatewayError('method_not_allowed', `${req.method} is not allowed on ${req.path}; use ${allow}.`));
  };
}

/**
 * Every failure leaves as the envelope: never Express's HTML page, never a stack trace, and never a
 * provider key, whatever the provider put in its error message.
 */
function answerError(logger: Logger, redact: Redact, linger: LingerBounds): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const answer = redactGatewayError(toGatewayError(error), redact);
    const record = recordOf(res);
    if (answer.body.gateway_code === 'internal_error') {
      logger.error({ request_id: record.requestId, error: redact(describeError(error)) }, 'internal error');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    record.gatewayCode = answer.body.gateway_code;
    // A body we stopped reading (401, 413, 415, …): close after answering, reading what is still coming for a bounded while first.
    if (!req.complete && (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length']) > 0)) {
      res.setHeader('connection', 'close');
      lingerAfterEarlyAnswer(req, linger);
    }
    sendError(res, answer);
  };
}

function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  // Errors raised by Express's own layers (malformed URI and the like) carry a 4xx status.
  const status = (error as { status?: unknown } | null)?.status;
  if (status === 400) return gatewayError('invalid_request', 'The request could not be read.');
  return gatewayError('internal_error', 'The gateway failed to handle this request.');
}

function sanitizePath(path: string): string {
  return path.length > 200 ? `${path.slice(0, 200)}…` : path.replace(/[^\x20-\x7e]/g, '?');
}
