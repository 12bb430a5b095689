import type { Test } from 'tap';
import type { RunningGateway } from './gateway.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';
import { startTelemetry } from '../../src/trace/start-telemetry.js';
import type { Telemetry } from '../../src/trace/telemetry.js';

/**
 * POSTs a streamed request and cancels it once its first event arrived; resolves, with what arrived, when the
 * gateway saw its response close (the drain's in-flight count drops then): what the provider sends next comes after the caller left.
 */
export async function cancelAfterFirstEvent(gateway: RunningGateway, body: unknown, headers: Record<string, string>, path = '/v1/chat/completions'): Promise<string> {
  const controller = new AbortController();
  const response = await fetch(`${gateway.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  if (response.status !== 200) throw new Error(`status ${response.status}: ${await response.text()}`);
  const reader = response.body!.getReader();
  let text = '';
  while (!text.includes('\n\n')) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the stream ended before its first event');
    text += Buffer.from(value).toString('utf8');
  }
  controller.abort();
  await reader.cancel().catch(() => {});
  while (gateway.tracked().inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  return text;
}

/** The request log line (of `requestId`, else the first), once written. */
export async function requestLine(gateway: RunningGateway, requestId?: string, timeoutMs = 20_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const lines = gateway.requestLogs();
    const line = requestId === undefined ? lines[0] : lines.find((found) => found['request_id'] === requestId);
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no request log line${requestId === undefined ? '' : ` for ${requestId}`}`);
}

/** A real OTLP receiver and telemetry exporting to it quickly (batches every 50 ms), both shut down when the test ends. */
export async function tracedToReceiver(t: Test): Promise<{ collector: OtlpReceiver; telemetry: Telemetry }> {
  const collector = await startOtlpReceiver();
  t.teardown(() => collector.close());
  const telemetry = startTelemetry(
    {
      traces: { url: `${collector.origin}/v1/traces`, protocol: 'http/json', headers: {} },
      metrics: { url: `${collector.origin}/v1/metrics`, protocol: 'http/json', headers: {} },
      serviceName: 'gateway-under-test',
      resourceAttributes: {},
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      metricIntervalMs: 200,
    },
    { version: '0.0.0-test', exportDelayMs: 50 },
  );
  t.teardown(() => telemetry.shutdown(1000));
  return { collector, telemetry };
}
