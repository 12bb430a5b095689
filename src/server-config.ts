import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import type { CorsOrigins } from './caller/cors.js';
import type { LogFormat } from './observe/log-format.js';
import { BUDGET_BYTES_PER_VALUE } from './caller/body-budget.js';
import { readTraceSettings, TraceSettingsError, type TraceSettings } from './trace/settings.js';

/** Everything the process is told through its environment, checked once at start-up. */
export interface ServerConfig {
  readonly port: number;
  readonly host: string;
  readonly maxBodyBytes: number;
  readonly maxUpstreamBodyBytes: number;
  /** JSON bounds checked before a request body is parsed. */
  readonly maxJsonDepth: number;
  readonly maxJsonValues: number;
  /** What all request bodies in flight may hold together (their bytes, plus a charge per JSON value). */
  readonly maxBodyBytesInFlight: number;
  /** What all streams may hold at once (the events they are reading, the text they hold), in heap bytes. */
  readonly maxStreamBytesInFlight: number;
  /** A caller must send its request headers within this (slowloris). */
  readonly headersTimeoutMs: number;
  /** A caller must send its whole request (headers and body) within this. */
  readonly requestTimeoutMs: number;
  /** Idle keep-alive connections are kept this long: longer than a load balancer's idle timeout. */
  readonly keepAliveTimeoutMs: number;
  /** Connections the kernel may hold for the worker to accept (listen(2)'s backlog; the kernel caps it at net.core.somaxconn). */
  readonly listenBacklog: number;
  readonly shutdownGraceMs: number;
  /** A reload (SIGHUP) gives up on new workers not ready within this, and the old ones keep serving. */
  readonly reloadTimeoutMs: number;
  /** Caller keys; empty means anonymous. */
  readonly callerKeys: readonly string[];
  /** Origins browsers may call from; empty means no CORS. */
  readonly corsOrigins: CorsOrigins;
  readonly workers: number;
  /** REDIS_URL: where callers' limits and spend are counted across instances; null: in the process. */
  readonly redisUrl: string | null;
  readonly logLevel: string;
  /** json, pretty, or auto: pretty when stdout is a terminal (server.ts decides). */
  readonly logFormat: 'auto' | LogFormat;
  /** OpenTelemetry from the standard OTEL_* variables; null when none is set (docs/observability.md). */
  readonly tracing: TraceSettings | null;
}

/** A start-up refusal, printed as one line on stderr. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const CONFIG_DEFAULTS = {
  port: 8080,
  host: '127.0.0.1',
  maxBodyBytes: 16 * 1024 * 1024,
  maxUpstreamBodyBytes: 64 * 1024 * 1024,
  maxJsonDepth: 128,
  maxJsonValues: 200_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
  shutdownGraceMs: 30_000,
  reloadTimeoutMs: 30_000,
  logLevel: 'info',
} as const;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The default of MAX_BODY_BYTES_IN_FLIGHT: sized for the shipped Kubernetes limit of 512 MiB, where Node's heap
 * is ~256 MiB. Bodies hold up to ~4 bytes of heap per budget byte (body-budget.ts), so 32 MiB keeps them within
 * half of it, leaving room for one body being parsed and for everything else. Never less than one request of the
 * largest size and value count allowed, or that request would be told to retry forever.
 */
export function defaultBodyBytesInFlight(oneLargestRequest: number): number {
  return Math.max(32 * 1024 * 1024, oneLargestRequest);
}

/**
 * The default of MAX_STREAM_BYTES_IN_FLIGHT: an eighth of V8's heap limit. heap_size_limit counts the young
 * generation too: under --max-old-space-size=256 it is 448 MiB on Node 24 (56 MiB here), 304 MiB on Node 22
 * (38 MiB). Beside it, request bodies take up to half of the old space (MAX_BODY_BYTES_IN_FLIGHT) and the one
 * stream whose held text is being written out its copies (at most MAX_UPSTREAM_BODY_BYTES); the rest is the
 * process's own.
 */
export function defaultStreamBytesInFlight(heapSizeLimit = getHeapStatistics().heap_size_limit): number {
  return Math.floor(heapSizeLimit / 8);
}

/** Node's own listen backlog, where the kernel's limit cannot be read. */
const NODE_LISTEN_BACKLOG = 511;

/**
 * The default of LISTEN_BACKLOG: the kernel's limit, net.core.somaxconn (4096 since Linux 5.4), as Go's net package
 * does; Node's own 511 overflows while thousands of streams open at once and the event loop is busy (the kernel then
 * drops or resets the connections it cannot queue: ECONNRESET at the caller).
 */
export function defaultListenBacklog(read: () => string = () => readFileSync('/proc/sys/net/core/somaxconn', 'latin1')): number {
  try {
    const value = Number(read().trim());
    return Number.isSafeInteger(value) && value > 0 ? value : NODE_LISTEN_BACKLOG;
  } catch {
    return NODE_LISTEN_BACKLOG;
  }
}

/** What the compiled routes say that the environment must agree with. */
export interface RoutesFacts {
  /** routes.yaml declares callers (then their keys, not GATEWAY_API_KEYS, decide who may call). */
  readonly callersDeclared: boolean;
}

export function readServerConfig(env: Env, routes: RoutesFacts = { callersDeclared: false }): ServerConfig {
  const host = env['HOST'] || CONFIG_DEFAULTS.host;
  const headersTimeoutMs = integer(env, 'HEADERS_TIMEOUT_MS', CONFIG_DEFAULTS.headersTimeoutMs, 1);
  const requestTimeoutMs = integer(env, 'REQUEST_TIMEOUT_MS', CONFIG_DEFAULTS.requestTimeoutMs, 1);
  if (headersTimeoutMs > requestTimeoutMs) throw new ConfigError('HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS');
  const callerKeys = readCallerKeys(env);
  if (routes.callersDeclared && (env['GATEWAY_API_KEYS'] || env['GATEWAY_API_KEYS_FILE'])) {
    throw new ConfigError(`routes.yaml declares callers and ${env['GATEWAY_API_KEYS'] ? 'GATEWAY_API_KEYS' : 'GATEWAY_API_KEYS_FILE'} is set: callers' keys replace GATEWAY_API_KEYS/GATEWAY_API_KEYS_FILE; unset it`);
  }
  if (callerKeys.length === 0 && !routes.callersDeclared && !isLoopback(host) && env['GATEWAY_ALLOW_ANONYMOUS'] !== 'true') {
    throw new ConfigError(
      `refusing to serve anonymously on ${host}: set GATEWAY_API_KEYS or GATEWAY_API_KEYS_FILE, bind HOST to loopback, or set GATEWAY_ALLOW_ANONYMOUS=true`,
    );
  }
  const maxBodyBytes = integer(env, 'MAX_BODY_BYTES', CONFIG_DEFAULTS.maxBodyBytes, 1);
  const maxJsonValues = integer(env, 'MAX_JSON_VALUES', CONFIG_DEFAULTS.maxJsonValues, 1);
  // One request of the largest size and value count must fit, or it would be told to retry forever.
  const oneLargestRequest = maxBodyBytes + maxJsonValues * BUDGET_BYTES_PER_VALUE;
  const maxBodyBytesInFlight = integer(env, 'MAX_BODY_BYTES_IN_FLIGHT', defaultBodyBytesInFlight(oneLargestRequest), 1);
  if (maxBodyBytesInFlight < oneLargestRequest) {
    throw new ConfigError(
      `MAX_BODY_BYTES_IN_FLIGHT must be at least MAX_BODY_BYTES + ${BUDGET_BYTES_PER_VALUE} x MAX_JSON_VALUES (${oneLargestRequest}), got ${maxBodyBytesInFlight}`,
    );
  }
  const logLevel = env['LOG_LEVEL'] || CONFIG_DEFAULTS.logLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  return {
    port: integer(env, 'PORT', CONFIG_DEFAULTS.port, 0, 65_535),
    host,
    maxBodyBytes,
    maxUpstreamBodyBytes: integer(env, 'MAX_UPSTREAM_BODY_BYTES', CONFIG_DEFAULTS.maxUpstreamBodyBytes, 1),
    maxJsonDepth: integer(env, 'MAX_JSON_DEPTH', CONFIG_DEFAULTS.maxJsonDepth, 1, 100_000),
    maxJsonValues,
    maxBodyBytesInFlight,
    maxStreamBytesInFlight: integer(env, 'MAX_STREAM_BYTES_IN_FLIGHT', defaultStreamBytesInFlight(), 1),
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', CONFIG_DEFAULTS.keepAliveTimeoutMs, 1),
    listenBacklog: integer(env, 'LISTEN_BACKLOG', defaultListenBacklog(), 1, 2_147_483_647),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', CONFIG_DEFAULTS.shutdownGraceMs, 0),
    reloadTimeoutMs: integer(env, 'RELOAD_TIMEOUT_MS', CONFIG_DEFAULTS.reloadTimeoutMs, 1),
    callerKeys,
    corsOrigins: readCorsOrigins(env),
    workers: env['WORKERS'] === 'auto' ? availableParallelism() : integer(env, 'WORKERS', 1, 1, 256),
    redisUrl: readRedisUrl(env),
    logLevel,
    logFormat: readLogFormat(env),
    tracing: readTracing(env),
  };
}

/** 127.0.0.0/8, ::1 and localhost: the only addresses served without caller keys by default. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^(::ffff:)?127(\.\d{1,3}){3}$/.test(bare);
}

function readCallerKeys(env: Env): string[] {
  const inline = env['GATEWAY_API_KEYS'];
  const file = env['GATEWAY_API_KEYS_FILE'];
  if (inline && file) throw new ConfigError('set GATEWAY_API_KEYS or GATEWAY_API_KEYS_FILE, not both');
  let keys: string[] = [];
  if (inline) keys = inline.split(',').map((key) => key.trim());
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new ConfigError(`cannot read GATEWAY_API_KEYS_FILE ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    keys = text.split(/\r?\n/).map((line) => line.trim()).filter((line) => !line.startsWith('#'));
  }
  keys = keys.filter((key) => key !== '');
  // Keys were meant (the variable is set) but none came through: serving anonymously would be a silent downgrade.
  const unusable = 'give at least one key, or unset it to serve anonymously';
  if (keys.length === 0 && inline) throw new ConfigError(`GATEWAY_API_KEYS is set but holds no key (only commas and white space); ${unusable}`);
  if (keys.length === 0 && file) throw new ConfigError(`GATEWAY_API_KEYS_FILE ${file} holds no key (only blank lines and # comments); ${unusable}`);
  // A key with white space or control characters could never arrive intact in a Bearer header.
  if (keys.some((key) => /[\s\u0000-\u001f\u007f]/.test(key))) throw new ConfigError('a caller key contains white space or control characters');
  return keys;
}

function readRedisUrl(env: Env): string | null {
  const url = env['REDIS_URL'];
  if (!url) return null;
  // Never echo the value: it may hold a password.
  if (!/^rediss?:\/\/\S+$/.test(url)) throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  return url;
}

function readTracing(env: Env): TraceSettings | null {
  try {
    return readTraceSettings(env, 'chat-routing-gateway');
  } catch (error) {
    if (error instanceof TraceSettingsError) throw new ConfigError(error.message);
    throw error;
  }
}

function readLogFormat(env: Env): 'auto' | LogFormat {
  const format = env['LOG_FORMAT'] || 'auto';
  if (format !== 'auto' && format !== 'json' && format !== 'pretty') throw new ConfigError('LOG_FORMAT must be auto, json or pretty');
  return format;
}

/** Exact origins as a browser sends them in Origin (scheme://host[:port], nothing more), or * alone. */
function readCorsOrigins(env: Env): CorsOrigins {
  const raw = env['CORS_ORIGINS'];
  if (!raw) return [];
  const origins = raw.split(',').map((origin) => origin.trim()).filter((origin) => origin !== '');
  if (origins.length === 0) throw new ConfigError('CORS_ORIGINS is set but holds no origin; give origins such as https://app.example.com, or *');
  if (origins.includes('*')) {
    if (origins.length > 1) throw new ConfigError('CORS_ORIGINS: * stands alone (it already allows every origin)');
    return '*';
  }
  for (const origin of origins) {
    // A browser's Origin is serialised: lower case, no default port, no path. Anything else would never match.
    const serialised = serialisedOrigin(origin);
    if (serialised !== origin) {
      const hint = serialised ? `; try ${JSON.stringify(serialised)}` : ' (scheme://host[:port], e.g. https://app.example.com)';
      throw new ConfigError(`CORS_ORIGINS: ${JSON.stringify(origin.slice(0, 200))} is not an origin as a browser sends it${hint}`);
    }
  }
  return origins;
}

function serialisedOrigin(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.username || url.password) return null;
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.origin;
  // Other schemes (chrome-extension://…) have no serialised origin in URL; browsers send them as scheme://host.
  return /^[a-z][a-z0-9+.-]*:\/\/[a-z0-9.-]+$/.test(text) ? text : null;
}

function integer(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw.slice(0, 40))}`);
  }
  return value;
}
