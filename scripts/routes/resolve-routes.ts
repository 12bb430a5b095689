import type { BreakerEntry, EndpointEntry, ErrorRule, ModelEntry, ProviderEntry, RoutesFile } from '../../src/generated/types/routes.js';
import type { BreakerTable, EndpointTable, ErrorRuleSet, KeyAuth, ModelTable, ProviderTable, ResolvedErrorRule, RouteTables } from '../../src/generated/types/route-tables.js';
import { DIALECT_DEFAULTS, type AuthScheme } from '../../src/dialects/dialect-defaults.js';
import { resolveCallers, resolvePrice } from './callers.js';

/** Used when neither the provider nor `defaults:` sets connect_timeout_ms: a TCP+TLS handshake that takes longer is not coming. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** Used when neither the provider nor `defaults:` sets timeout_ms: long enough for slow reasoning models. */
export const DEFAULT_TIMEOUT_MS = 600_000;
/** Used when neither the provider nor `defaults:` sets stream_idle_timeout_ms: reasoning models can think silently for minutes. */
export const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 300_000;
/** Used for each breaker key neither the provider nor `defaults.breaker` sets. */
export const DEFAULT_BREAKER: BreakerTable = { consecutiveFailures: 5, cooldownMs: 30_000, maxCooldownMs: 300_000 };
/** Used when `defaults:` sets no max_attempts: a second endpoint and one fallback, no more (the caller's SDK retries too). */
export const DEFAULT_MAX_ATTEMPTS = 3;

/** Turns a checked routes file into the tables the engine reads: inheritance applied, nothing left to derive at start-up. */
export function resolveRoutes(routes: RoutesFile, sourceSha256: string): RouteTables {
  const defaults = routes.defaults ?? {};
  const providers: Record<string, ProviderTable> = {};
  for (const id of Object.keys(routes.providers).sort()) {
    const entry = routes.providers[id]!;
    const dialect = entry.dialect ?? 'openai';
    const dialectDefaults = DIALECT_DEFAULTS[dialect];
    providers[id] = {
      id,
      dialect,
      endpoints: resolveEndpoints(entry),
      auth: authOf(entry.auth ?? dialectDefaults.auth, Boolean(entry.api_key_env || entry.endpoints?.some((endpoint) => endpoint.api_key_env))),
      ...(entry.region ? { region: entry.region } : {}),
      ...awsSigning(entry, dialectDefaults.auth),
      headers: withDefaults(dialectDefaults.headers, entry.headers ?? {}),
      connectTimeoutMs: entry.connect_timeout_ms ?? defaults.connect_timeout_ms ?? DEFAULT_CONNECT_TIMEOUT_MS,
      timeoutMs: entry.timeout_ms ?? defaults.timeout_ms ?? DEFAULT_TIMEOUT_MS,
      streamIdleTimeoutMs: entry.stream_idle_timeout_ms ?? defaults.stream_idle_timeout_ms ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS,
      streamUsage: entry.stream_usage ?? defaults.stream_usage ?? true,
      errors: resolveErrorRules(entry.errors ?? {}),
      breaker: resolveBreaker(entry.breaker, defaults.breaker),
    };
  }
  const models: RouteTables['models'] = {};
  for (const [routingString, entry] of Object.entries(routes.models)) {
    const slash = routingString.indexOf('/');
    models[routingString] = {
      provider: routingString.slice(0, slash),
      upstreamModel: entry?.upstream_model ?? routingString.slice(slash + 1),
      maxOutputTokens: entry?.max_output_tokens ?? null,
      reasoning: entry?.reasoning ?? 'none',
      ...geminiThinking(entry ?? null, routes.providers[routingString.slice(0, slash)]?.dialect),
      ...(entry?.api === 'responses' ? { api: 'responses' as const } : {}),
      ...(entry?.kind === 'embedding' ? { kind: 'embedding' as const } : {}),
      fallback: entry?.fallback ?? [],
      deprecated: entry?.deprecated ? { since: entry.deprecated.since, sunset: entry.deprecated.sunset, replacement: entry.deprecated.replacement ?? null } : null,
      allowFields: [...new Set([...(routes.providers[routingString.slice(0, slash)]?.allow_fields ?? []), ...(entry?.allow_fields ?? [])])],
      price: resolvePrice(entry?.price),
    };
  }
  const maxAttempts = defaults.max_attempts ?? DEFAULT_MAX_ATTEMPTS;
  return { sourceSha256, maxAttempts, providers, models, errors: resolveErrorRules(routes.errors), callers: resolveCallers(routes) };
}

/** Each key: the provider's, else defaults.breaker's, else the built-in default. */
export function resolveBreaker(own: BreakerEntry | undefined, inherited: BreakerEntry | undefined): BreakerTable {
  return {
    consecutiveFailures: own?.consecutive_failures ?? inherited?.consecutive_failures ?? DEFAULT_BREAKER.consecutiveFailures,
    cooldownMs: own?.cooldown_ms ?? inherited?.cooldown_ms ?? DEFAULT_BREAKER.cooldownMs,
    maxCooldownMs: own?.max_cooldown_ms ?? inherited?.max_cooldown_ms ?? DEFAULT_BREAKER.maxCooldownMs,
  };
}

/** base_url alone is one endpoint, named "0" like the first of a list; a bedrock provider without one has its region's. */
function resolveEndpoints(entry: ProviderEntry): EndpointTable[] {
  const single: EndpointEntry = { base_url: entry.base_url ?? `https://bedrock-runtime.${entry.region!}.amazonaws.com` };
  if (entry.base_url_env) single.base_url_env = entry.base_url_env;
  if (entry.api_key_env) single.api_key_env = entry.api_key_env;
  return (entry.endpoints ?? [single]).map((endpoint, index) => ({
    name: endpoint.name ?? String(index),
    baseUrl: endpoint.base_url.replace(/\/+$/, ''),
    baseUrlEnv: endpoint.base_url_env ?? null,
    apiKeyEnv: endpoint.api_key_env ?? null,
    weight: endpoint.weight ?? 1,
  }));
}

/** `auth: google`: an OAuth2 access token as a bearer, fetched by the engine (src/routing/auth/). */
const GOOGLE_AUTH: KeyAuth = { header: 'authorization', scheme: 'google' };
/** `auth: aws`: each request signed with AWS Signature Version 4 by the engine (src/routing/auth/). */
const AWS_AUTH: KeyAuth = { header: 'authorization', scheme: 'aws' };

/** The provider's auth: google and aws take no key; a key scheme applies only when the provider has a key. */
function authOf(scheme: AuthScheme | 'google', hasKey: boolean): KeyAuth | null {
  if (scheme === 'google') return GOOGLE_AUTH;
  if (scheme === 'aws') return AWS_AUTH;
  return hasKey ? keyAuth(scheme) : null;
}

/** Bedrock Runtime's signing name (its host says bedrock-runtime; the credential scope says bedrock). */
const BEDROCK_SIGNING_SERVICE = 'bedrock';

/** A provider with auth: aws: the service it signs for and the variables of its keys (it signs for its region). */
function awsSigning(entry: ProviderEntry, dialectAuth: AuthScheme): Pick<ProviderTable, 'awsSigning'> {
  if ((entry.auth ?? dialectAuth) !== 'aws') return {};
  const named = entry.aws_credentials_env;
  const credentialsEnv = named ? { accessKeyId: named.access_key_id, secretAccessKey: named.secret_access_key, sessionToken: named.session_token ?? '' } : null;
  return { awsSigning: { service: BEDROCK_SIGNING_SERVICE, credentialsEnv } };
}

/** The budget range every Gemini 2.5 model accepts (2.5 Flash-Lite starts at 512, 2.5 Flash ends at 24576). */
export const DEFAULT_THINKING_BUDGET = { min: 512, max: 24576 } as const;
/** The levels every Gemini 3.x model accepts. */
export const DEFAULT_REASONING_LEVELS = ['low', 'high'] as const;
const LEVEL_ORDER = ['minimal', 'low', 'medium', 'high'];

/** A gemini-dialect model's thinking range (budget) or levels, lowest first; nothing for other models. */
function geminiThinking(entry: ModelEntry | null, dialect: string | undefined): Pick<ModelTable, 'thinkingBudget' | 'reasoningLevels'> {
  if (dialect !== 'gemini') return {};
  if (entry?.reasoning === 'budget') return { thinkingBudget: { ...(entry.thinking_budget ?? DEFAULT_THINKING_BUDGET) } };
  if (entry?.reasoning === 'levels') {
    const levels = entry.reasoning_levels ?? DEFAULT_REASONING_LEVELS;
    return { reasoningLevels: LEVEL_ORDER.filter((level) => levels.includes(level as never)) };
  }
  return {};
}

function keyAuth(scheme: Exclude<AuthScheme, 'aws'>): KeyAuth {
  return scheme === 'bearer' ? { header: 'authorization', scheme: 'bearer' } : { header: scheme.header.toLowerCase(), scheme: 'raw' };
}

/** The dialect's default headers, each replaced by a routes.yaml header of the same name in any case. */
function withDefaults(defaults: Readonly<Record<string, string>>, headers: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const given = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
  const merged: Record<string, string> = {};
  for (const [name, value] of Object.entries(defaults)) if (!given.has(name)) merged[name] = value;
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) merged[name] = value;
  return merged;
}

function resolveErrorRules(table: Readonly<Record<string, ErrorRule | undefined>>): ErrorRuleSet {
  const resolved: Record<string, ResolvedErrorRule> = {};
  for (const [key, rule] of Object.entries(table)) {
    if (!rule) continue;
    resolved[key] = {
      status: rule.status,
      type: rule.type,
      code: rule.code,
      gatewayCode: rule.gateway_code,
      retry: rule.retry ?? retryableByDefault(rule.status),
    };
  }
  return resolved;
}

/** The statuses OpenAI's SDKs retry when a response carries no x-should-retry. */
function retryableByDefault(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}
