// Builds the OpenTelemetry SDK from settings: loaded (by dynamic import from server.ts) only when tracing or
// metrics are configured, so a gateway without OTEL_* variables never loads the SDK nor creates an exporter.
import type { Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import { CountingSpanQueue } from './bounded-export.js';
import { createGenAiMetrics } from './genai-metrics.js';
import type { TraceSettings } from './settings.js';
import type { Telemetry } from './telemetry.js';

/** Spans waiting for the collector at most; beyond, new spans are dropped and counted (2048 is the SDK's default). */
export const MAX_QUEUED_SPANS = 2048;
/** One export may take this long before it is given up: a slow collector holds one batch, never a request. */
const EXPORT_TIMEOUT_MS = 10_000;

export interface TelemetryOptions {
  /** The package version, on the resource and the instrumentation scope. */
  readonly version: string;
  /** Overrides MAX_QUEUED_SPANS (tests). */
  readonly maxQueuedSpans?: number;
  /** Overrides how often batches leave (tests; the SDK's default is 5 s). */
  readonly exportDelayMs?: number;
}

export function startTelemetry(settings: TraceSettings, options: TelemetryOptions): Telemetry {
  const resource = resourceFromAttributes({
    ...settings.resourceAttributes,
    'service.name': settings.serviceName,
    'service.version': options.version,
  });
  const scope = 'chat-routing-gateway';

  let tracer: Tracer | null = null;
  let tracerProvider: TracerProvider | null = null;
  const queue = new CountingSpanQueue(options.maxQueuedSpans ?? MAX_QUEUED_SPANS);
  if (settings.traces) {
    const config = { url: settings.traces.url, headers: { ...settings.traces.headers }, timeoutMillis: EXPORT_TIMEOUT_MS };
    const exporter = settings.traces.protocol === 'http/json' ? new JsonTraceExporter(config) : new ProtoTraceExporter(config);
    const batch = new BatchSpanProcessor({
      exporter: queue.exporter(exporter),
      maxQueueSize: options.maxQueuedSpans ?? MAX_QUEUED_SPANS,
      exportTimeoutMillis: EXPORT_TIMEOUT_MS,
      ...(options.exportDelayMs !== undefined ? { scheduledDelayMillis: options.exportDelayMs } : {}),
    });
    tracerProvider = new TracerProvider({ resource, sampler: samplerOf(settings), spanProcessors: [queue.processor(batch)] });
    tracer = tracerProvider.getTracer(scope, options.version);
  }

  let meterProvider: MeterProvider | null = null;
  if (settings.metrics) {
    const config = { url: settings.metrics.url, headers: { ...settings.metrics.headers }, timeoutMillis: EXPORT_TIMEOUT_MS };
    const exporter = settings.metrics.protocol === 'http/json' ? new JsonMetricExporter(config) : new ProtoMetricExporter(config);
    const interval = settings.metricIntervalMs;
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: interval, exportTimeoutMillis: Math.min(interval, EXPORT_TIMEOUT_MS) });
    meterProvider = new MeterProvider({ resource, readers: [reader] });
  }

  return {
    tracer,
    propagator: new W3CTraceContextPropagator(),
    metrics: meterProvider ? createGenAiMetrics(meterProvider.getMeter(scope, options.version)) : null,
    spansDropped: () => queue.dropped,
    async shutdown(timeoutMs) {
      // What is queued gets until the deadline to leave; a collector that is away never holds up the exit.
      const done = Promise.allSettled([tracerProvider?.shutdown(), meterProvider?.shutdown()]);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([done, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
    },
  };
}

function samplerOf(settings: TraceSettings): Sampler {
  const ratio = new TraceIdRatioBasedSampler(settings.samplerRatio);
  switch (settings.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}
