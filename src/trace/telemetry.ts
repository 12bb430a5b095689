import type { TextMapPropagator, Tracer } from '@opentelemetry/api';
import type { GenAiMetrics } from './genai-metrics.js';

/** OpenTelemetry as the request path sees it: absent altogether when nothing is configured (docs/observability.md). */
export interface Telemetry {
  /** null when only metrics are exported. */
  readonly tracer: Tracer | null;
  /** W3C trace context: reads the caller's traceparent/tracestate, writes the provider's. */
  readonly propagator: TextMapPropagator;
  /** null when only traces are exported. */
  readonly metrics: GenAiMetrics | null;
  /** Spans dropped because the queue to the collector was full, since start-up. */
  spansDropped(): number;
  /** Sends what is queued, waiting at most `timeoutMs`. */
  shutdown(timeoutMs: number): Promise<void>;
}
