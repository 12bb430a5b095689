import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as the receiver decoded it from OTLP/HTTP JSON; attribute values unwrapped. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's numbering: 2 SERVER, 3 CLIENT. */
  readonly kind: number;
  readonly statusCode: number;
  readonly attributes: Record<string, unknown>;
  readonly resource: Record<string, unknown>;
}

/** One metric data point: the metric's name, its attributes, and its count and sum when a histogram. */
export interface ReceivedPoint {
  readonly metric: string;
  readonly unit: string;
  readonly attributes: Record<string, unknown>;
  readonly count: number;
  readonly sum: number;
}

export interface OtlpReceiver {
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  readonly spans: ReceivedSpan[];
  readonly points: ReceivedPoint[];
  /** The headers of every export request, in order. */
  readonly headers: IncomingHttpHeaders[];
  /** Resolves once `find` returns something for what arrived so far; rejects after `timeoutMs`. */
  waitFor<T>(find: () => T | undefined, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

export const SPAN_KIND = { server: 2, client: 3 } as const;

/**
 * A real node:http OTLP/HTTP receiver on port 0 that decodes what the official exporters send with
 * OTEL_EXPORTER_OTLP_PROTOCOL=http/json (POST /v1/traces and /v1/metrics). `holdMs` answers that late: a slow collector.
 */
export async function startOtlpReceiver(options: { holdMs?: number } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const held = new Set<ServerResponse>();
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      headers.push(req.headers);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      if (req.url === '/v1/traces') spans.push(...decodeSpans(body));
      else if (req.url === '/v1/metrics') points.push(...decodePoints(body));
      const answer = () => {
        held.delete(res);
        if (res.destroyed) return;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      };
      if (options.holdMs) {
        held.add(res);
        setTimeout(answer, options.holdMs).unref();
      } else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    spans,
    points,
    headers,
    async waitFor(find, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = find();
        if (found !== undefined) return found;
        if (Date.now() > deadline) throw new Error(`nothing expected arrived within ${timeoutMs} ms: ${spans.length} spans, ${points.length} points`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Json = Record<string, unknown>;
const list = (value: unknown) => (Array.isArray(value) ? (value as Json[]) : []);

function decodeSpans(body: Json): ReceivedSpan[] {
  return list(body['resourceSpans']).flatMap((resourceSpans) => {
    const resource = attributesOf((resourceSpans['resource'] as Json | undefined)?.['attributes']);
    return list(resourceSpans['scopeSpans']).flatMap((scope) =>
      list(scope['spans']).map((span) => ({
        traceId: String(span['traceId']),
        spanId: String(span['spanId']),
        parentSpanId: String(span['parentSpanId'] ?? ''),
        name: String(span['name']),
        kind: Number(span['kind']),
        statusCode: Number((span['status'] as Json | undefined)?.['code'] ?? 0),
        attributes: attributesOf(span['attributes']),
        resource,
      })),
    );
  });
}

function decodePoints(body: Json): ReceivedPoint[] {
  return list(body['resourceMetrics']).flatMap((resourceMetrics) =>
    list(resourceMetrics['scopeMetrics']).flatMap((scope) =>
      list(scope['metrics']).flatMap((metric) => {
        const data = (metric['histogram'] ?? metric['sum'] ?? metric['gauge']) as Json | undefined;
        return list(data?.['dataPoints']).map((point) => ({
          metric: String(metric['name']),
          unit: String(metric['unit'] ?? ''),
          attributes: attributesOf(point['attributes']),
          count: Number(point['count'] ?? 0),
          sum: Number(point['sum'] ?? point['asDouble'] ?? point['asInt'] ?? 0),
        }));
      }),
    ),
  );
}

function attributesOf(value: unknown): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const attribute of list(value)) result[String(attribute['key'])] = valueOf(attribute['value'] as Json);
  return result;
}

function valueOf(value: Json | undefined): unknown {
  if (!value) return undefined;
  if ('stringValue' in value) return value['stringValue'];
  if ('boolValue' in value) return value['boolValue'];
  if ('intValue' in value) return Number(value['intValue']);
  if ('doubleValue' in value) return Number(value['doubleValue']);
  if ('arrayValue' in value) return list((value['arrayValue'] as Json)['values']).map(valueOf);
  return undefined;
}
