// OpenTelemetry as ops turn it on: the standard OTEL_* variables of `node dist/server.js` (README: Tracing).
import t, { type Test } from 'tap';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';
import { SPAN_KIND, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { logLinesOf, startServerProcess } from './server-process.js';
import { readTraceSettings } from '../../src/trace/settings.js';
import { readServerConfig } from '../../src/server-config.js';

// Each case starts `node dist/server.js`; on a loaded machine that takes seconds.
t.setTimeout(180_000);

const ask = JSON.stringify({ model: 'local/llama3.2', messages: [{ role: 'user', content: 'hi' }] });

async function provider(t: Test) {
  const upstream = await startMockUpstream((request, res) => sendJson(res, 200, completionBody(String(JSON.parse(request.body).model))));
  t.teardown(() => upstream.close());
  return upstream;
}

const post = (origin: string) => fetch(`${origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'process-1' }, body: ask });

t.test('with no OTEL_* variable nothing of OpenTelemetry runs: no exporter, no traceparent upstream, trace_id null', async (t) => {
  t.equal(readTraceSettings({}, 'x'), null, 'no settings');
  t.equal(readTraceSettings({ OTEL_SERVICE_NAME: 'svc', OTEL_TRACES_SAMPLER: 'always_on' }, 'x'), null, 'a service name alone exports nothing');
  const upstream = await provider(t);
  const server = await startServerProcess({ LOCAL_LLM_BASE_URL: `${upstream.origin}/v1` });
  t.teardown(() => server.child.kill('SIGKILL'));
  t.equal((await post(server.origin)).status, 200);
  t.notOk('traceparent' in upstream.requests[0]!.headers, 'no traceparent is sent');
  t.notMatch(await (await fetch(`${server.origin}/metrics`)).text(), /gateway_trace_spans_dropped_total/, 'no span queue to count');
  server.child.kill('SIGTERM');
  await server.exited;
  t.notMatch(server.output(), /opentelemetry/, 'no "opentelemetry on" line: the SDK was not started');
  const line = logLinesOf(server.output()).find((entry) => entry['msg'] === 'request' && entry['path'] === '/v1/chat/completions');
  t.equal(line?.['trace_id'], null);
});

t.test('OTEL_EXPORTER_OTLP_ENDPOINT turns it on: spans reach the collector with the headers and service name asked for; SIGTERM flushes them', async (t) => {
  const upstream = await provider(t);
  const collector = await startOtlpReceiver();
  t.teardown(() => collector.close());
  const server = await startServerProcess({
    LOCAL_LLM_BASE_URL: `${upstream.origin}/v1`,
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.origin,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20collector-token,x-tenant=gw',
    OTEL_SERVICE_NAME: 'edge-gateway',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=staging',
    OTEL_METRICS_EXPORTER: 'none',
  });
  t.teardown(() => server.child.kill('SIGKILL'));
  t.equal((await post(server.origin)).status, 200);
  const metrics = await (await fetch(`${server.origin}/metrics`)).text();
  t.match(metrics, /^gateway_trace_spans_dropped_total 0$/m, 'dropped spans are counted on /metrics');
  // Batches leave every 5 s; the drain sends what is queued at once.
  server.child.kill('SIGTERM');
  t.equal(await server.exited, 0);
  const spans = await collector.waitFor(() => (collector.spans.length >= 2 ? collector.spans : undefined), 5000);
  const serverSpan = spans.find((span) => span.kind === SPAN_KIND.server)!;
  t.match(serverSpan.resource, { 'service.name': 'edge-gateway', 'deployment.environment.name': 'staging' });
  t.match(serverSpan.attributes, { 'gateway.request_id': 'process-1', 'gateway.routing_string': 'local/llama3.2' });
  t.ok(spans.some((span) => span.kind === SPAN_KIND.client && span.parentSpanId === serverSpan.spanId));
  t.match(collector.headers[0], { authorization: 'Bearer collector-token', 'x-tenant': 'gw', 'content-type': 'application/json' });
  t.equal(upstream.requests[0]!.headers['traceparent'], `00-${serverSpan.traceId}-${spans.find((span) => span.kind === SPAN_KIND.client)!.spanId}-01`);
  const lines = logLinesOf(server.output());
  t.match(lines.find((entry) => entry['msg'] === 'opentelemetry on'), { traces: `${collector.origin} (http/json)`, metrics: null, service_name: 'edge-gateway' });
  t.equal(lines.find((entry) => entry['msg'] === 'request' && entry['path'] === '/v1/chat/completions')?.['trace_id'], serverSpan.traceId);
  t.notMatch(server.output(), /collector-token/, 'the collector header is never logged');
});

// A ConfigError is the one-line start-up refusal (test/process/server-process.test.ts runs one through the process).
t.test('every variable the gateway cannot honour is a start-up refusal, never echoing a header value', async (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json.*grpc is not supported/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\/ URL/],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' }, /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is not a URL/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_SAMPLER: 'sometimes' }, /OTEL_TRACES_SAMPLER must be one of/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_SAMPLER_ARG: '2' }, /OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_HEADERS: 'a=%E0%A4%A' }, /OTEL_EXPORTER_OTLP_HEADERS holds a malformed percent-encoding/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'zipkin' }, /OTEL_TRACES_EXPORTER must be otlp or none/],
  ];
  for (const [env, message] of cases) t.throws(() => readServerConfig(env), { name: 'ConfigError', message }, JSON.stringify(env));
  t.throws(() => readServerConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'sk-secret-no-equals' }), { message: /^(?!.*sk-secret).*must be key=value pairs/ });
});

t.test('the standard variables read into settings', async (t) => {
  const shared = readTraceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'gw')!;
  t.match(shared, {
    traces: { url: 'http://collector:4318/v1/traces', protocol: 'http/protobuf' },
    metrics: { url: 'http://collector:4318/v1/metrics', protocol: 'http/protobuf' },
    serviceName: 'gw',
    sampler: 'parentbased_always_on',
    samplerRatio: 1,
  });
  const own = readTraceSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }, 'gw')!;
  t.match(own, { traces: { url: 'https://traces.example/otlp', protocol: 'http/json' }, metrics: null, sampler: 'parentbased_traceidratio', samplerRatio: 0.25 });
  t.equal(readTraceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }, 'gw'), null, 'OTEL_SDK_DISABLED wins');
  t.match(readTraceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }, 'gw'), { traces: null, metrics: { url: 'http://c:4318/v1/metrics' } });
  t.match(readTraceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'a=1', OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'a=2,b=x%3Dy' }, 'gw'), {
    traces: { headers: { a: '1' } },
    metrics: { headers: { a: '2', b: 'x=y' } },
  });
});
