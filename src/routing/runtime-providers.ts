import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import got, { type Got } from 'got';
import { nativeRequest } from '../wire/native-request.js';
import { DIALECTS } from '../dialects/index.js';
import type { Dialect } from '../dialects/dialect.js';
import type { EndpointTable, ProviderTable, RouteTables } from '../generated/types/route-tables.js';
import { baseUrlProblem } from './base-url-rules.js';
import { EndpointBreaker } from './circuit-breaker.js';
import { SOCKET_HIGH_WATER_MARK } from '../wire/high-water-mark.js';
import { googleTokenSource, type AuthStateLog, type GoogleTokenSource } from './auth/google.js';
import { MIN_REDACTED_SECRET_CHARS, secretRedactor, type Redact } from '../observe/redact-secrets.js';
import { awsDefaultChain, awsKeysFromEnv, DEFAULT_AWS_KEY_NAMES, isNoSourceError, type AwsChainSource, type AwsKeys } from './auth/aws-credentials.js';
import type { AwsCallSigning } from './auth/aws-call.js';
import { loadAwsSigner } from './auth/aws-sigv4.js';

/** One deployment of a provider (a key, a region): its own URL, key and clients. */
export interface RuntimeEndpoint {
  readonly name: string;
  /** Its place in routes.yaml (at most 32 endpoints): its bit in a request's set of endpoints tried. */
  readonly index: number;
  readonly weight: number;
  readonly baseUrl: string;
  /** The api_key_env that is unset in this process, or null when the endpoint is ready. */
  readonly missingKeyEnv: string | null;
  /** got instances with every fixed option (timeouts included), so a request adds only its body and id. */
  readonly clients: { readonly streamed: Got; readonly whole: Got };
  /** This process's view of the endpoint's health (docs/failover.md). */
  readonly breaker: EndpointBreaker;
}

/** A provider as this process will call it: env applied, clients built once at start-up. */
export interface RuntimeProvider {
  readonly id: string;
  readonly table: ProviderTable;
  readonly dialect: Dialect;
  readonly endpoints: readonly RuntimeEndpoint[];
  /** The endpoints that have their key, in routes.yaml order; empty when none has. */
  readonly ready: readonly RuntimeEndpoint[];
  /** The first unset api_key_env when no endpoint is ready, else null. */
  readonly missingKeyEnv: string | null;
  /** Takes this provider's keys (every endpoint's) out of text it sent before the caller sees it (a provider may quote one). */
  readonly redact: Redact;
  /** Its access tokens when its credentials are one (auth: google), else null. */
  readonly tokens: GoogleTokenSource | null;
  /** How each call is signed when its credentials are AWS keys (auth: aws), else null. */
  readonly aws: AwsCallSigning | null;
}

export interface RuntimeProviders {
  readonly byId: ReadonlyMap<string, RuntimeProvider>;
  /** One line per provider that cannot serve yet, for the start-up log. No values, only names. */
  readonly warnings: readonly string[];
  /** Takes every configured provider key out of text: for error envelopes and log lines. */
  readonly redact: Redact;
  /** Closes the keep-alive sockets to every provider and stops refreshing tokens. */
  close(): void;
  /** Settles once every token source (and the AWS default credential chain) fetched, or failed to fetch, its first credential. */
  readonly tokensReady: Promise<void>;
}

/** Where operational lines go after start-up (a token that can no longer be had, and its return). */
export type OperationalLog = (level: 'info' | 'warn', message: string) => void;

function googleAuthLog(log: OperationalLog): AuthStateLog {
  return (state, reason) =>
    state === 'ok' ? log('info', 'auth: google: access token obtained') : log('warn', `auth: google: no access token (${reason}); its providers answer 503 provider_auth_failed`);
}

/** The chain's changes of state: credentials obtained; no source at all (the providers are not configured); a source failing. */
function awsChainLog(log: OperationalLog, providers: readonly string[]): AuthStateLog {
  return (state, reason, error) => {
    if (state === 'ok') return log('info', 'auth: aws: credentials obtained from the AWS default credential chain');
    if (isNoSourceError(error)) {
      const named = providers.map((id) => `${id} (${DEFAULT_AWS_KEY_NAMES})`).join(', ');
      return log('warn', `not configured, no AWS credentials: ${named}: unset, and the AWS default credential chain found none (profile, web identity, container, instance metadata); their models answer 500 provider_not_configured`);
    }
    log('warn', `auth: aws: no credentials from the AWS default credential chain (${reason}); its providers answer 503 provider_auth_failed`);
  };
}

/**
 * An auth: aws provider: signed with its own keys; or, on the default chain, not configured (no endpoint ready, 500
 * provider_not_configured naming the variables) while the chain finds no source at all, else signed with what the
 * chain holds. With keys missing it stays as built: not configured.
 */
function signedProvider(provider: RuntimeProvider, table: ProviderTable, keys: AwsKeys, chain: AwsChainSource | null): RuntimeProvider {
  const signing = table.awsSigning!;
  const region = table.region ?? '';
  if (keys.kind === 'static') return { ...provider, aws: { region, service: signing.service, current: () => keys.credentials } };
  if (keys.kind === 'missing' || !chain) return provider;
  const { endpoints } = provider;
  return {
    ...provider,
    get ready() {
      return chain.unconfigured ? [] : endpoints;
    },
    get missingKeyEnv() {
      return chain.unconfigured ? DEFAULT_AWS_KEY_NAMES : null;
    },
    redact: both(provider.redact, chain.redact),
    aws: { region, service: signing.service, current: chain.current },
  };
}

function both(first: Redact, second: Redact): Redact {
  return (text) => second(first(text));
}

type Agents = { http: HttpAgent; https: HttpsAgent };

/** The breakers' clock: monotonic, so a change of the wall clock neither ejects nor releases anything. */
const now = () => performance.now();

/** Builds every provider's endpoints with their clients once, so a request only adds its body and its request id. */
export function prepareProviders(tables: RouteTables, env: Readonly<Record<string, string | undefined>>, userAgent: string, log: OperationalLog = () => {}): RuntimeProviders {
  const agentOptions = { keepAlive: true, keepAliveMsecs: 1000, maxFreeSockets: 256, scheduling: 'lifo' as const, highWaterMark: SOCKET_HIGH_WATER_MARK };
  const agent = { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) };
  const byId = new Map<string, RuntimeProvider>();
  const warnings: string[] = [];
  const unkeyed: string[] = [];
  const keys: string[] = [];
  // One source for every auth: google provider: Application Default Credentials are the process's.
  const usesGoogle = Object.values(tables.providers).some((table) => table?.auth?.scheme === 'google');
  const tokens = usesGoogle ? googleTokenSource(env, googleAuthLog(log)) : null;
  // One default AWS credential chain for every auth: aws provider without keys of its own: the process's role.
  const chained = Object.values(tables.providers).filter((table) => table?.awsSigning && awsKeysFromEnv(table.awsSigning, env).kind === 'chain').map((table) => table!.id);
  const chain = chained.length > 0 ? awsDefaultChain(awsChainLog(log, chained)) : null;
  if (Object.values(tables.providers).some((table) => table?.awsSigning)) void loadAwsSigner();
  if (chain) log('info', `auth: aws: ${DEFAULT_AWS_KEY_NAMES} unset; ${chained.join(', ')} sign with the AWS default credential chain`);
  for (const table of Object.values(tables.providers)) {
    if (!table) continue;
    const providerKeys: string[] = [];
    const awsKeys = table.awsSigning ? awsKeysFromEnv(table.awsSigning, env) : undefined;
    if (awsKeys?.kind === 'static') providerKeys.push(awsKeys.credentials.secretAccessKey, awsKeys.credentials.sessionToken ?? '');
    // AWS keys belong to the provider: named once in the warning, missing at each endpoint.
    const awsMissing = awsKeys?.kind === 'missing' ? awsKeys.names.join(', ') : null;
    if (awsMissing) unkeyed.push(`${table.id} (${awsMissing})`);
    const endpoints = table.endpoints.map((endpoint, index) => {
      const label = table.endpoints.length === 1 ? `provider "${table.id}"` : `provider "${table.id}" endpoint "${endpoint.name}"`;
      const key = endpoint.apiKeyEnv ? env[endpoint.apiKeyEnv] : undefined;
      const missingKeyEnv = endpoint.apiKeyEnv && !key ? endpoint.apiKeyEnv : awsMissing;
      if (missingKeyEnv && !awsMissing) unkeyed.push(`${table.endpoints.length === 1 ? table.id : `${table.id} endpoint ${endpoint.name}`} (${missingKeyEnv})`);
      if (key && key.length < MIN_REDACTED_SECRET_CHARS) {
        warnings.push(`${label}: ${endpoint.apiKeyEnv} is shorter than ${MIN_REDACTED_SECRET_CHARS} characters, so it is not redacted from the provider's answers`);
      }
      if (key) providerKeys.push(key);
      const baseUrl = baseUrlFor(endpoint, label, env);
      return { name: endpoint.name, index, weight: endpoint.weight, baseUrl, missingKeyEnv, clients: clientsFor(table, baseUrl, key, userAgent, agent), breaker: new EndpointBreaker(table.breaker, now) };
    });
    keys.push(...providerKeys);
    const ready = endpoints.filter((endpoint) => endpoint.missingKeyEnv === null);
    const missingKeyEnv = ready.length === 0 ? endpoints[0]!.missingKeyEnv : null;
    const provider = { id: table.id, table, dialect: DIALECTS[table.dialect], endpoints, ready, missingKeyEnv, redact: secretRedactor(providerKeys), tokens: table.auth?.scheme === 'google' ? tokens : null, aws: null };
    byId.set(table.id, awsKeys ? signedProvider(provider, table, awsKeys, chain) : provider);
  }
  if (unkeyed.length > 0) warnings.unshift(unkeyedWarning(unkeyed));
  return {
    byId,
    warnings,
    redact: chain ? both(secretRedactor(keys), chain.redact) : secretRedactor(keys),
    tokensReady: Promise.all([tokens?.ready, chain?.ready]).then(() => {}),
    close() {
      tokens?.close();
      chain?.close();
      agent.http.destroy();
      agent.https.destroy();
    },
  };
}

/**
 * The got instances of one endpoint (one per timeout mode). Redirects are not followed (a key must not travel to
 * another host), nothing is retried (failover and the caller's SDK decide), nothing is decompressed (we do not ask for it).
 */
function clientsFor(table: ProviderTable, baseUrl: string, key: string | undefined, userAgent: string, agent: Agents): RuntimeEndpoint['clients'] {
  const headers: Record<string, string> = { 'user-agent': userAgent, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  for (const [name, value] of Object.entries(table.headers)) if (value !== undefined) headers[name.toLowerCase()] = value;
  // The scheme (bearer, or the raw key under the dialect's or routes.yaml's header) was resolved by the build.
  if (key && table.auth) headers[table.auth.header] = table.auth.scheme === 'bearer' ? `Bearer ${key}` : key;
  // request: node's http(s).request without the options got leaves undefined, which the socket would hold (native-request.ts).
  const fixed = { prefixUrl: baseUrl, method: 'POST', headers, agent, request: nativeRequest, retry: { limit: 0 }, followRedirect: false, decompress: false, throwHttpErrors: false, http2: false } as const;
  // timeout_ms bounds the whole response of a non-streamed call, the response headers of a streamed one.
  const connect = { connect: table.connectTimeoutMs, secureConnect: table.connectTimeoutMs };
  // One extend each from got itself: a got call copies its instance's defaults, so they are built once, flat.
  return {
    streamed: got.extend({ ...fixed, timeout: { ...connect, response: table.timeoutMs } }),
    whole: got.extend({ ...fixed, timeout: { ...connect, request: table.timeoutMs } }),
  };
}

function baseUrlFor(endpoint: EndpointTable, label: string, env: Readonly<Record<string, string | undefined>>): string {
  const override = endpoint.baseUrlEnv ? env[endpoint.baseUrlEnv] : undefined;
  if (!override) return endpoint.baseUrl;
  // The routes compiler's own rule for base_url; the value is not echoed (it may hold a password).
  const problem = baseUrlProblem(override);
  if (problem) throw new Error(`${endpoint.baseUrlEnv} (the base_url of ${label}): ${problem}`);
  return override.replace(/\/+$/, '');
}

/** Most providers named in the start-up warning: keeps the line far below the log's line bound. */
const MAX_UNKEYED_NAMED = 40;

/** One line for every provider (or endpoint of several) whose key is unset: ten lines at each start hid the rest. */
function unkeyedWarning(unkeyed: readonly string[]): string {
  const named = unkeyed.slice(0, MAX_UNKEYED_NAMED).join(', ');
  const more = unkeyed.length > MAX_UNKEYED_NAMED ? ` and ${unkeyed.length - MAX_UNKEYED_NAMED} more` : '';
  return `not configured, no key set: ${named}${more}; their models answer 500 provider_not_configured (an endpoint among several is avoided instead)`;
}
