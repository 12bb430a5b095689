import type { IncomingHttpHeaders } from 'node:http';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, defaultTextMapSetter, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import type { RequestHandler, Response } from 'express';
import { pricedUsage, recordOf, type RequestRecord } from '../observe/request-log.js';
import { GatewayError } from '../wire/gateway-error.js';
import { GATEWAY, GEN_AI, OPERATION_CHAT, providerNameOf, requestParameterAttributes, serverOf, type RequestParameters } from './genai-attributes.js';
import type { Telemetry } from './telemetry.js';

/** The inbound endpoints that call providers: each request on them gets a SERVER span. */
const TRACED_PATHS: ReadonlySet<string> = new Set(['/v1/chat/completions', '/v1/responses', '/v1/messages']);
/** The provider's strings on a span are cut to this; a provider could send megabytes. */
const MAX_ATTRIBUTE_CHARS = 256;
/** One per choice: a provider could send thousands. */
const MAX_FINISH_REASONS = 16;

function boundedString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value.slice(0, MAX_ATTRIBUTE_CHARS) : undefined;
}

/** What an attempt span reads of the provider and endpoint (routing's RuntimeProvider and RuntimeEndpoint have this shape). */
export interface TracedProvider {
  readonly id: string;
  readonly table: { readonly dialect: string };
}
export interface TracedEndpoint {
  readonly name: string;
  readonly baseUrl: string;
}

/**
 * A SERVER span for each POST to an inbound endpoint (chat completions, responses, messages), joined to the caller's traceparent, ended when the response
 * closes. Installed only when OpenTelemetry is configured: otherwise no middleware, and requestTraceOf is undefined.
 */
export function traceRequests(telemetry: Telemetry): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'POST' || !TRACED_PATHS.has(req.path)) {
      next();
      return;
    }
    const record = recordOf(res);
    const requestTrace = new RequestTrace(telemetry, req.headers, record, req.path);
    res.locals['trace'] = requestTrace;
    res.once('close', () => requestTrace.end(res));
    next();
  };
}

/** The request's trace when tracing is on; undefined otherwise (the one check the request path pays). */
export function requestTraceOf(res: Response): RequestTrace | undefined {
  return res.locals['trace'] as RequestTrace | undefined;
}

export class RequestTrace {
  private readonly span: Span | null;
  /** The context attempt spans are children of. */
  private readonly context: Context;

  constructor(
    private readonly telemetry: Telemetry,
    headers: IncomingHttpHeaders,
    private readonly record: RequestRecord,
    path: string,
  ) {
    const tracer = telemetry.tracer;
    if (!tracer) {
      this.span = null;
      this.context = ROOT_CONTEXT;
      return;
    }
    const parent = telemetry.propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    this.span = tracer.startSpan(
      `POST ${path}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': 'POST', 'url.path': path, 'url.scheme': 'http', 'http.route': path, [GATEWAY.requestId]: record.requestId },
      },
      parent,
    );
    this.context = trace.setSpan(parent, this.span);
    if (this.span.isRecording()) record.traceId = this.span.spanContext().traceId;
  }

  /** One upstream attempt: a CLIENT span under the request's, and the headers that carry it to the provider. */
  startAttempt(routingString: string, upstreamModel: string, provider: TracedProvider, endpoint: TracedEndpoint, body: RequestParameters): AttemptTrace {
    return new AttemptTrace(this.telemetry, this.context, this.record, { routingString, upstreamModel, provider, endpoint, body });
  }

  end(res: Response): void {
    const { record } = this;
    const status = res.statusCode;
    // record.model is the caller's string until the roster accepted it, which is when provider is set.
    const routingString = record.provider !== null ? record.model : null;
    const failed = status >= 500;
    const errorType = failed ? (record.gatewayCode ?? String(status)) : null;
    if (this.span) {
      const attributes: Attributes = { 'http.response.status_code': status, [GEN_AI.requestStream]: record.stream };
      if (routingString !== null) attributes[GATEWAY.routingString] = routingString;
      if (record.provider !== null) attributes[GATEWAY.provider] = record.provider;
      if (record.gatewayCode !== null) attributes[GATEWAY.code] = record.gatewayCode;
      if (record.caller !== null) attributes[GATEWAY.caller] = record.caller;
      if (errorType !== null) {
        attributes['error.type'] = errorType;
        this.span.setStatus({ code: SpanStatusCode.ERROR });
      }
      this.span.setAttributes(attributes);
      this.span.end();
    }
    if (this.telemetry.metrics) {
      const attributes: Attributes = { [GEN_AI.operationName]: OPERATION_CHAT };
      if (routingString !== null) attributes[GEN_AI.requestModel] = routingString;
      if (record.gatewayCode !== null) attributes['error.type'] = record.gatewayCode;
      const firstToken = record.stream && record.firstEventMs !== null ? record.firstEventMs / 1000 : null;
      this.telemetry.metrics.request(attributes, (performance.now() - record.startedAt) / 1000, firstToken);
    }
  }
}

export class AttemptTrace {
  private readonly span: Span | null;
  private readonly startedAt = performance.now();
  /** The provider's gen_ai.provider.name and the model sent: the attributes metrics are split by. */
  private readonly common: Attributes;
  /** traceparent (and tracestate) of this attempt, for the upstream request; undefined when not tracing. */
  readonly headers: Record<string, string> | undefined;

  constructor(
    private readonly telemetry: Telemetry,
    parent: Context,
    private readonly record: RequestRecord,
    { routingString, upstreamModel, provider, endpoint, body }: { routingString: string; upstreamModel: string; provider: TracedProvider; endpoint: TracedEndpoint; body: RequestParameters },
  ) {
    this.common = { [GEN_AI.operationName]: OPERATION_CHAT, [GEN_AI.providerName]: providerNameOf(provider.table.dialect), [GEN_AI.requestModel]: upstreamModel };
    const tracer = telemetry.tracer;
    if (!tracer) {
      this.span = null;
      this.headers = undefined;
      return;
    }
    const server = serverOf(endpoint.baseUrl);
    const attributes: Attributes = {
      ...this.common,
      [GEN_AI.requestStream]: record.stream,
      'server.address': server.address,
      'server.port': server.port,
      [GATEWAY.routingString]: routingString,
      [GATEWAY.provider]: provider.id,
      [GATEWAY.endpoint]: endpoint.name,
      [GATEWAY.attempt]: (record.attempts?.length ?? 0) + 1,
    };
    requestParameterAttributes(body, attributes);
    this.span = tracer.startSpan(`${OPERATION_CHAT} ${upstreamModel}`, { kind: SpanKind.CLIENT, attributes }, parent);
    const headers: Record<string, string> = {};
    this.telemetry.propagator.inject(trace.setSpan(parent, this.span), headers, defaultTextMapSetter);
    this.headers = headers;
  }

  /** The provider's id, model and finish reasons of a non-streamed answer (a dialect's AnswerDescription): bounded strings only. */
  answered(described: { readonly id: unknown; readonly model: unknown; readonly finishReasons: readonly unknown[] } | undefined): void {
    if (!described || !this.span?.isRecording()) return;
    const attributes: Attributes = {};
    const id = boundedString(described.id);
    const model = boundedString(described.model);
    if (id !== undefined) attributes[GEN_AI.responseId] = id;
    if (model !== undefined) attributes[GEN_AI.responseModel] = model;
    const reasons = described.finishReasons.slice(0, MAX_FINISH_REASONS).map(boundedString).filter((reason) => reason !== undefined);
    if (reasons.length > 0) attributes[GEN_AI.responseFinishReasons] = reasons;
    this.span.setAttributes(attributes);
  }

  /**
   * Ends the attempt: `errorType` is null when it answered, else the outcome the log line gives it (the provider's
   * status or the gateway code); `error` is what it failed with.
   */
  end(errorType: string | null, error?: unknown): void {
    const { record } = this;
    const seconds = (performance.now() - this.startedAt) / 1000;
    // Read once per usage and shared with the callers' settle, the log line and metrics.
    const tokens = record.usage ? pricedUsage(record).tokens.counts : null;
    // The relay stamps the request's first event; measured here from this attempt's start.
    const firstChunk = record.stream && record.firstEventMs !== null ? Math.max(0, (record.startedAt + record.firstEventMs - this.startedAt) / 1000) : null;
    if (this.span) {
      const attributes: Attributes = {};
      if (tokens?.prompt != null) attributes[GEN_AI.usageInputTokens] = tokens.prompt;
      if (tokens?.completion != null) attributes[GEN_AI.usageOutputTokens] = tokens.completion;
      if (tokens?.cached != null) attributes[GEN_AI.usageCacheReadInputTokens] = tokens.cached;
      if (tokens?.reasoning != null) attributes[GEN_AI.usageReasoningOutputTokens] = tokens.reasoning;
      if (firstChunk !== null) attributes[GEN_AI.responseTimeToFirstChunk] = firstChunk;
      if (errorType !== null) {
        attributes['error.type'] = errorType;
        const code = error instanceof GatewayError ? error.body.gateway_code : error !== undefined ? 'internal_error' : record.gatewayCode;
        if (code) attributes[GATEWAY.code] = code;
        this.span.setStatus({ code: SpanStatusCode.ERROR });
      }
      this.span.setAttributes(attributes);
      this.span.end();
    }
    if (this.telemetry.metrics) {
      const attributes = errorType === null ? this.common : { ...this.common, 'error.type': errorType };
      this.telemetry.metrics.attempt(attributes, seconds, errorType === null && tokens ? { input: tokens.prompt, output: tokens.completion } : null, firstChunk);
    }
  }
}
