import { TraceFlags, type Context } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace';

/**
 * Bounds the spans waiting for the collector and counts those dropped. Ending a span only queues it: the batch
 * processor behind exports on a timer, so a collector that is down or slow never delays an answer. Once
 * `maxQueued` spans wait (not yet exported, nor failed), new ones are dropped and counted, so memory stays
 * bounded however long the collector is away. (The SDK's own processor drops too, but keeps no count.)
 */
export class CountingSpanQueue {
  /** Spans handed to the batch processor and not yet through the exporter. */
  private waiting = 0;
  dropped = 0;

  constructor(private readonly maxQueued: number) {}

  /** Wraps the exporter so every finished export (success or failure) frees its spans' places. */
  exporter(inner: SpanExporter): SpanExporter {
    return {
      export: (spans: ReadableSpan[], done: (result: ExportResult) => void) => {
        inner.export(spans, (result) => {
          this.waiting -= spans.length;
          done(result);
        });
      },
      shutdown: () => inner.shutdown(),
      ...(inner.forceFlush ? { forceFlush: () => inner.forceFlush!() } : {}),
    };
  }

  /** Sits in front of the batch processor: drops (and counts) a sampled span when the queue is full. */
  processor(inner: SpanProcessor): SpanProcessor {
    return {
      onStart: (span: Span, parent: Context) => inner.onStart(span, parent),
      onEnd: (span: ReadableSpan) => {
        // Spans sampled out are never exported (the batch processor skips them): they take no place.
        if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
        if (this.waiting >= this.maxQueued) {
          this.dropped++;
          return;
        }
        this.waiting++;
        inner.onEnd(span);
      },
      forceFlush: () => inner.forceFlush(),
      shutdown: () => inner.shutdown(),
    };
  }
}
