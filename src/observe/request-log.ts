import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import type { PriceTable } from '../generated/types/route-tables.js';
import type { Usage } from '../generated/types/usage.js';
import { costUsd as priceOf } from './cost.js';
import { GATEWAY_ERRORS } from '../wire/gateway-errors.js';
import { infoLineWriter, json, num } from './info-line.js';
import { MAX_LOGGED_PATH_CHARS, boundedText, describeError, looksLikeRoutingString, modelFingerprint } from './log-fields.js';
import { readTokenCounts, type ReadTokenCounts } from './token-counts.js';

/** One attempt as the log line lists it. */
export interface AttemptRecord {
  readonly route: string;
  readonly provider: string;
  readonly endpoint: string;
  /** ok, the provider's HTTP status, or the gateway code of the failure. */
  readonly outcome: string;
  readonly ms: number;
}

/** What one request's log line says. Never a key, never message content. */
export interface RequestRecord {
  readonly requestId: string;
  readonly startedAt: number;
  /** The caller's name (routes.yaml callers), `key` for GATEWAY_API_KEYS, `anonymous` without keys; null until known. */
  caller: string | null;
  /** The caller's model string once it is known to be one; logged as is only when it is on the roster. */
  model: string | null;
  provider: string | null;
  stream: boolean;
  gatewayCode: string | null;
  /** From sending upstream to the provider's response headers. */
  upstreamHeadersMs: number | null;
  /** From the request's arrival to the first event relayed. */
  firstEventMs: number | null;
  usage: Usage | null;
  /** usage is the gateway's estimate (usage-estimate.ts): the provider reported none for an answer it gave. */
  usageEstimated: boolean;
  /** The price of the model that served (a fallback's own); the answer's cost is priced from it and usage. */
  price: PriceTable | null;
  /** usage read as counts and priced (see pricedUsage: the answer's USD is there), kept for the usage and price it was read from. */
  priced: PricedUsage | null;
  /** Every upstream attempt, in order (docs/failover.md); null until the first. */
  attempts: AttemptRecord[] | null;
  /** The routing string is deprecated in routes.yaml (its answers carry Deprecation and Sunset). */
  deprecated: boolean;
  /** The OpenTelemetry trace of the request when it is traced (docs/observability.md), so a log line leads to its trace. */
  traceId: string | null;
  /** Set while the handler still settles the request after its response closed (see holdLine): the line waits for it. */
  lineHeld: boolean;
  /** The held line, written by releaseLine. */
  lineDue: (() => void) | null;
}

/** An answer's token counts and cost, read from the record's usage and price. */
export interface PricedUsage {
  readonly usage: Usage | null;
  readonly price: PriceTable | null;
  readonly tokens: ReadTokenCounts;
  readonly costUsd: number | null;
}

/**
 * The record's token counts and cost, read once per usage: the callers' settle, the log line and the metrics of
 * one request share them (read again only if usage or price changed since).
 */
export function pricedUsage(record: RequestRecord): PricedUsage {
  const { priced, usage, price } = record;
  if (priced !== null && priced.usage === usage && priced.price === price) return priced;
  const tokens = readTokenCounts(usage);
  return (record.priced = { usage, price, tokens, costUsd: priceOf(usage, price, tokens.counts) });
}

export function recordOf(res: Response): RequestRecord {
  return res.locals['record'] as RequestRecord;
}

/** Sees every finished request with the record its log line was written from (metrics, for one). */
export type RequestObserver = (record: RequestRecord, req: Request, res: Response, durationMs: number) => void;

/**
 * Starts the record (and the request id) for every request, and when it closes writes one JSON line
 * and hands the same record to `onRequestDone`. Every field is bounded (see MAX_LOG_LINE_BYTES): a model
 * string off the roster that does not look like a routing string is logged only as a fingerprint, since the caller may have put anything in it.
 */
export function requestLog(
  logger: Logger,
  requestId: (callerValue: string | string[] | undefined) => string,
  onRequestDone?: RequestObserver,
  isRoutingString: (model: string) => boolean = () => false,
): RequestHandler {
  const writeRequestLine = infoLineWriter(logger, 'request', { mayWait: true });
  // One 'close' listener for every response (called with the response as `this`): no closure per request.
  function writeLine(this: Response): void {
    const res = this;
    const req = res.req;
    const record = recordOf(res);
    if (record.lineHeld) {
      // Written when the handler lets go (releaseLine): its attempts, usage and charge are known then.
      record.lineDue = () => writeLine.call(res);
      return;
    }
    if (!res.headersSent) {
      // The caller left before any answer: say so (499, as proxies do) rather than the default 200.
      res.statusCode = GATEWAY_ERRORS.caller_disconnected.status;
      record.gatewayCode ??= 'caller_disconnected';
    }
    const { tokens, costUsd } = pricedUsage(record);
    const durationMs = performance.now() - record.startedAt;
    // Off the roster, a plain routing-like string is logged as is (who still calls a removed model), anything else hashed.
    const onRoster = record.model !== null && (isRoutingString(record.model) || looksLikeRoutingString(record.model));
    const { counts } = tokens;
    // The fields in the order pino would write them from an object literal (see info-line.ts).
    writeRequestLine(
      `"request_id":${json(record.requestId)},"caller":${json(record.caller)},"trace_id":${json(record.traceId)}` +
        `,"method":${json(boundedText(req.method, 16))},"path":${json(boundedText(req.path, MAX_LOGGED_PATH_CHARS))}` +
        `,"model":${json(onRoster ? record.model : null)},"model_fingerprint":${json(record.model !== null && !onRoster ? modelFingerprint(record.model) : null)}` +
        `,"provider":${json(record.provider)},"stream":${record.stream},"status":${num(res.statusCode)},"gateway_code":${json(record.gatewayCode)}` +
        `,"completed":${res.writableFinished},"duration_ms":${num(round(durationMs))},"upstream_headers_ms":${num(record.upstreamHeadersMs)}` +
        `,"first_event_ms":${num(record.firstEventMs)},"attempts":${json(record.attempts)},"deprecated":${record.deprecated}` +
        `,"prompt_tokens":${num(counts.prompt)},"completion_tokens":${num(counts.completion)},"cached_tokens":${num(counts.cached)}` +
        `,"reasoning_tokens":${num(counts.reasoning)},"cost_usd":${num(costUsd)},"usage_estimated":${record.usageEstimated}`,
    );
    if (Object.keys(tokens.anomalies).length > 0) {
      // Once per request (the last usage a stream reported); field names and a reason, never the value.
      logger.warn({ request_id: record.requestId, provider: record.provider, fields: tokens.anomalies }, 'provider anomaly: token counts that are not non-negative integers were ignored');
    }
    if (onRequestDone) {
      try {
        onRequestDone(record, req, res, durationMs);
      } catch (error) {
        // A listener of 'close' that throws would take the process down with every request in it.
        logger.error({ request_id: record.requestId, error: describeError(error) }, 'request observer failed');
      }
    }
  }
  return (req, res, next) => {
    const record: RequestRecord = {
      requestId: requestId(req.headers['x-request-id']),
      startedAt: performance.now(),
      caller: null,
      model: null,
      provider: null,
      stream: false,
      gatewayCode: null,
      upstreamHeadersMs: null,
      firstEventMs: null,
      usage: null,
      usageEstimated: false,
      price: null,
      priced: null,
      attempts: null,
      deprecated: false,
      traceId: null,
      lineHeld: false,
      lineDue: null,
    };
    res.locals['record'] = record;
    res.setHeader('x-request-id', record.requestId);
    // 'close' comes once per response, so a plain listener does what once() would without its wrapper.
    res.on('close', writeLine);
    next();
  };
}

/**
 * Holds the request's log line (and what observes it: metrics) past the response's close until releaseLine: a
 * handler may still be settling then (a stream reading the provider's usage after the caller left, an attempt
 * being logged), and the line must say how the request ended and what it cost.
 */
export function holdLine(record: RequestRecord): void {
  record.lineHeld = true;
}

/** The handler settled: the line is written now if the response has closed, else when it closes. */
export function releaseLine(record: RequestRecord): void {
  record.lineHeld = false;
  const due = record.lineDue;
  record.lineDue = null;
  due?.();
}

export function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
