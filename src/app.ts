import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import type { ModelTable, RouteTables } from './generated/types/route-tables.js';
import { chatCompletionsHandler } from './engine/chat-completions.js';
import { GatewayError, gatewayError } from './engine/gateway-error.js';
import { requestIdFor } from './engine/request-id.js';
import { prepareProviders } from './engine/runtime-providers.js';
import { sendError } from './engine/send-error.js';

export interface AppOptions {
  /** Where api_key_env and base_url_env are looked up. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly version: string;
  readonly maxBodyBytes: number;
  readonly maxUpstreamBodyBytes: number;
  /** Receives operational warnings (never keys or content). */
  readonly warn: (message: string) => void;
}

export interface Gateway {
  readonly app: Express;
  /** Releases the keep-alive sockets to providers. */
  close(): void;
}

/** The whole HTTP surface, built from compiled tables. It never listens: server.ts (or a test) does. */
export function createGateway(tables: RouteTables, options: AppOptions): Gateway {
  const providers = prepareProviders(tables, options.env, `chat-routing-gateway/${options.version}`);
  for (const warning of providers.warnings) options.warn(warning);
  const roster = new Map(Object.entries(tables.models).filter((entry): entry is [string, ModelTable] => entry[1] !== undefined));

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);

  app.use(assignRequestId);
  app.post(
    '/v1/chat/completions',
    chatCompletionsHandler({
      roster,
      providers: providers.byId,
      errors: tables.errors,
      maxBodyBytes: options.maxBodyBytes,
      maxUpstreamBodyBytes: options.maxUpstreamBodyBytes,
    }),
  );
  app.all('/v1/chat/completions', methodNotAllowed('POST'));
  app.get('/health', (_req, res) => {
    res.json({ status: 'ok', version: options.version, models: roster.size, routes_sha256: tables.sourceSha256 });
  });
  app.all('/health', methodNotAllowed('GET, HEAD'));
  app.use((req, _res, next) => {
    next(gatewayError('not_found', `There is no ${req.method} ${sanitizePath(req.path)} on this gateway; the chat endpoint is POST /v1/chat/completions.`));
  });
  app.use(answerError(options.warn));
  return { app, close: () => providers.close() };
}

const assignRequestId: RequestHandler = (req, res, next) => {
  const id = requestIdFor(req.headers['x-request-id']);
  res.locals['requestId'] = id;
  res.setHeader('x-request-id', id);
  next();
};

function methodNotAllowed(allow: string): RequestHandler {
  return (req, res, next) => {
    res.setHeader('allow', allow);
    next(gatewayError('method_not_allowed', `${req.method} is not allowed on ${req.path}; use ${allow}.`));
  };
}

/** Every failure leaves as the envelope: never Express's HTML page, never a stack trace. */
function answerError(warn: (message: string) => void): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const answer = toGatewayError(error);
    if (answer.body.gateway_code === 'internal_error') warn(`internal error on ${req.method} ${sanitizePath(req.path)}: ${describe(error)}`);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // A body we stopped reading (413, 415, …) must not be drained from a hostile sender: close after answering.
    if (!req.complete && (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length']) > 0)) {
      res.setHeader('connection', 'close');
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

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : typeof error;
}

function sanitizePath(path: string): string {
  return path.length > 200 ? `${path.slice(0, 200)}…` : path.replace(/[^\x20-\x7e]/g, '?');
}
