// The standard OTEL_* variables read into settings (docs/observability.md). Pure: server.ts hands in its environment.

/** Where one signal (traces or metrics) goes over OTLP/HTTP. */
export interface OtlpTarget {
  /** The full URL: a shared endpoint gets /v1/traces or /v1/metrics appended, a signal's own is used as given. */
  readonly url: string;
  readonly protocol: 'http/protobuf' | 'http/json';
  readonly headers: Readonly<Record<string, string>>;
}

export type SamplerName = 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';

export interface TraceSettings {
  /** null: no span is exported (and none is made). */
  readonly traces: OtlpTarget | null;
  /** null: no GenAI metric is exported. */
  readonly metrics: OtlpTarget | null;
  readonly serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, decoded. */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly sampler: SamplerName;
  /** The ratio of the traceidratio samplers, 0 to 1. */
  readonly samplerRatio: number;
  /** OTEL_METRIC_EXPORT_INTERVAL: how often metrics are pushed. */
  readonly metricIntervalMs: number;
}

/** A variable the gateway cannot honour: server.ts refuses to start with this message. */
export class TraceSettingsError extends Error {
  override name = 'TraceSettingsError';
}

type Env = Readonly<Record<string, string | undefined>>;

const SAMPLERS: readonly SamplerName[] = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];
const DEFAULT_METRIC_INTERVAL_MS = 60_000;

/** null when nothing is configured (or OTEL_SDK_DISABLED=true): then nothing of OpenTelemetry is loaded. */
export function readTraceSettings(env: Env, defaultServiceName: string): TraceSettings | null {
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return null;
  const traces = exporterOf(env, 'TRACES') === 'none' ? null : targetOf(env, 'TRACES', 'traces');
  const metrics = exporterOf(env, 'METRICS') === 'none' ? null : targetOf(env, 'METRICS', 'metrics');
  if (!traces && !metrics) return null;
  const sampler = (env['OTEL_TRACES_SAMPLER']?.trim() || 'parentbased_always_on') as SamplerName;
  if (!SAMPLERS.includes(sampler)) throw new TraceSettingsError(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}`);
  return {
    traces,
    metrics,
    serviceName: env['OTEL_SERVICE_NAME']?.trim() || defaultServiceName,
    resourceAttributes: keyValues(env, 'OTEL_RESOURCE_ATTRIBUTES'),
    sampler,
    samplerRatio: ratioOf(env),
    metricIntervalMs: positiveInteger(env, 'OTEL_METRIC_EXPORT_INTERVAL', DEFAULT_METRIC_INTERVAL_MS),
  };
}

function exporterOf(env: Env, signal: 'TRACES' | 'METRICS'): string {
  const value = env[`OTEL_${signal}_EXPORTER`]?.trim() || 'otlp';
  if (value !== 'otlp' && value !== 'none') throw new TraceSettingsError(`OTEL_${signal}_EXPORTER must be otlp or none (the gateway exports over OTLP/HTTP only)`);
  return value;
}

function targetOf(env: Env, signal: 'TRACES' | 'METRICS', path: string): OtlpTarget | null {
  const own = env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`]?.trim();
  const shared = env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim();
  const url = own || (shared ? `${shared.replace(/\/+$/, '')}/v1/${path}` : '');
  if (!url) return null;
  const variable = own ? `OTEL_EXPORTER_OTLP_${signal}_ENDPOINT` : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TraceSettingsError(`${variable} is not a URL (http://collector:4318, for one)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new TraceSettingsError(`${variable} must be an http:// or https:// URL`);
  const protocol = env[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`]?.trim() || env['OTEL_EXPORTER_OTLP_PROTOCOL']?.trim() || 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new TraceSettingsError(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, got ${JSON.stringify(protocol.slice(0, 40))} (grpc is not supported)`);
  }
  const headers = { ...keyValues(env, 'OTEL_EXPORTER_OTLP_HEADERS'), ...keyValues(env, `OTEL_EXPORTER_OTLP_${signal}_HEADERS`) };
  return { url, protocol, headers };
}

/** `key=value,key2=value2`, each part percent-decoded (the W3C baggage form the OTel spec uses for these variables). */
function keyValues(env: Env, name: string): Record<string, string> {
  const raw = env[name];
  const result: Record<string, string> = {};
  if (!raw) return result;
  for (const part of raw.split(',')) {
    if (part.trim() === '') continue;
    const at = part.indexOf('=');
    // Never echo a value: these may hold an API key.
    if (at <= 0) throw new TraceSettingsError(`${name} must be key=value pairs separated by commas`);
    try {
      result[decodeURIComponent(part.slice(0, at).trim())] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      throw new TraceSettingsError(`${name} holds a malformed percent-encoding`);
    }
  }
  return result;
}

function ratioOf(env: Env): number {
  const raw = env['OTEL_TRACES_SAMPLER_ARG']?.trim();
  if (!raw) return 1;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 1) throw new TraceSettingsError('OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1');
  return value;
}

function positiveInteger(env: Env, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new TraceSettingsError(`${name} must be a positive integer (milliseconds)`);
  return value;
}
