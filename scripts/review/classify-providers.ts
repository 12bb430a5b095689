import type { BreakerTable, EndpointTable, ProviderTable, RouteTables } from '../../src/generated/types/route-tables.js';
import { sameValue, toJson, type Change, type JsonValue, type LineOf, type Severity } from './change.js';

/** The timeouts: lowered, a request or stream that finishes today is cut off (behaviour); raised, safe. */
const TIMEOUT_KEYS = ['connectTimeoutMs', 'timeoutMs', 'streamIdleTimeoutMs'] as const;

/** The routes.yaml key of a compiled field, to point at its line. */
const YAML_KEYS: Record<string, string> = {
  connectTimeoutMs: 'connect_timeout_ms',
  timeoutMs: 'timeout_ms',
  streamIdleTimeoutMs: 'stream_idle_timeout_ms',
  streamUsage: 'stream_usage',
};

/**
 * Providers added and removed, their dialect, endpoints (with the host traffic goes to), keys, static headers and
 * tuning, and max_attempts. `modelSeverity` says how the removal of each removed routing string was classified, so
 * that removing a provider is as severe as removing its models (a planned removal of all of them is not breaking).
 */
export function classifyProviders(old: RouteTables, next: RouteTables, lineOf: LineOf, modelSeverity: ReadonlyMap<string, Severity>): Change[] {
  const changes: Change[] = [];
  for (const id of Object.keys(old.providers).sort()) {
    if (Object.hasOwn(next.providers, id)) continue;
    const models = Object.keys(old.models).filter((model) => old.models[model]!.provider === id);
    const severities = models.map((model) => modelSeverity.get(model));
    const severity: Severity = severities.includes('breaking') ? 'breaking' : severities.includes('behaviour') ? 'behaviour' : 'safe';
    changes.push({ severity, kind: 'provider_removed', provider: id, before: { dialect: old.providers[id]!.dialect, models: models.length } });
  }
  for (const id of Object.keys(next.providers).sort()) {
    const before = old.providers[id];
    const after = next.providers[id]!;
    if (!before) {
      const endpoints = after.endpoints.map((endpoint) => endpoint.name);
      changes.push({ severity: 'safe', kind: 'provider_added', provider: id, after: { dialect: after.dialect, endpoints, hosts: after.endpoints.map(hostOf) }, line: lineOf(['providers', id]) });
      continue;
    }
    changes.push(...compareProvider(id, before, after, lineOf));
  }
  if (old.maxAttempts !== next.maxAttempts) {
    changes.push({ severity: 'behaviour', kind: 'max_attempts_changed', before: old.maxAttempts, after: next.maxAttempts, line: lineOf(['defaults', 'max_attempts']) });
  }
  return changes;
}

function compareProvider(id: string, before: ProviderTable, after: ProviderTable, lineOf: LineOf): Change[] {
  const changes: Change[] = [];
  const at = (...path: (string | number)[]) => lineOf(['providers', id, ...path]);
  const common = { provider: id };
  const dialectChanged = before.dialect !== after.dialect;
  if (dialectChanged) {
    changes.push({ severity: 'breaking', kind: 'dialect_changed', ...common, before: before.dialect, after: after.dialect, line: at('dialect') });
  }
  changes.push(...compareEndpoints(id, before.endpoints, after.endpoints, at));
  // Another dialect brings its own default headers and key header: part of dialect_changed, not repeated.
  if (!dialectChanged && !sameValue(sortedEntries(before.headers), sortedEntries(after.headers))) {
    // Static headers reach the provider with every request and can change what it does (an API version, a beta).
    changes.push({ severity: 'behaviour', kind: 'headers_changed', ...common, before: toJson(before.headers), after: toJson(after.headers), line: at('headers') });
  }
  if (!dialectChanged && !sameValue(before.auth, after.auth)) {
    // The key in another header (or scheme): a provider that expects it where it was answers 401 to every request.
    changes.push({ severity: 'behaviour', kind: 'key_header_changed', ...common, before: toJson(before.auth), after: toJson(after.auth), line: at('auth') });
  } else if (!dialectChanged && before.region !== after.region) {
    // A signature for another region: refused by an endpoint of the old one.
    changes.push({ severity: 'behaviour', kind: 'key_header_changed', ...common, before: toJson({ ...before.auth, region: before.region }), after: toJson({ ...after.auth, region: after.region }), line: at('region') });
  }
  if (!dialectChanged && !sameValue(before.awsSigning ?? null, after.awsSigning ?? null)) {
    // Signed for another region, or with keys from other variables: AWS refuses every call until both sides agree.
    changes.push({ severity: 'behaviour', kind: 'key_header_changed', ...common, before: toJson(before.awsSigning ?? null), after: toJson(after.awsSigning ?? null), line: at('region') });
  }
  // Settings changed in the caller's favour (a longer timeout, a more lenient breaker): one safe item.
  const was: { [key: string]: JsonValue } = {};
  const now: { [key: string]: JsonValue } = {};
  const loosened = (key: string, from: unknown, to: unknown) => {
    was[key] = toJson(from);
    now[key] = toJson(to);
  };
  for (const key of TIMEOUT_KEYS) {
    if (before[key] === after[key]) continue;
    if (after[key] < before[key]) changes.push({ severity: 'behaviour', kind: 'timeout_lowered', ...common, before: { [key]: before[key] }, after: { [key]: after[key] }, line: at(YAML_KEYS[key]!) });
    else loosened(key, before[key], after[key]);
  }
  if (!sameValue(before.breaker, after.breaker)) {
    if (stricter(before.breaker, after.breaker)) changes.push({ severity: 'behaviour', kind: 'breaker_stricter', ...common, before: toJson(before.breaker), after: toJson(after.breaker), line: at('breaker') });
    else loosened('breaker', before.breaker, after.breaker);
  }
  if (before.streamUsage !== after.streamUsage) {
    // Off: streamed answers whose caller did not ask for usage carry none, so they are not counted or charged.
    changes.push({ severity: 'behaviour', kind: 'stream_usage_changed', ...common, before: before.streamUsage, after: after.streamUsage, line: at('stream_usage') });
  }
  const firstKey = Object.keys(was)[0];
  if (firstKey !== undefined) changes.push({ severity: 'safe', kind: 'provider_changed', ...common, before: was, after: now, line: at(YAML_KEYS[firstKey] ?? firstKey) });
  return changes;
}

/** A breaker that opens sooner (fewer failures) or stays open longer takes an endpoint away from callers more often. */
function stricter(before: BreakerTable, after: BreakerTable): boolean {
  return after.consecutiveFailures < before.consecutiveFailures || after.cooldownMs > before.cooldownMs || after.maxCooldownMs > before.maxCooldownMs;
}

/**
 * Endpoints by name: a new base URL sends callers' requests to another server (behaviour); a weight is tuning; a key
 * read from another variable fails every request to the endpoint until that variable is set where the gateway runs.
 */
function compareEndpoints(id: string, before: readonly EndpointTable[], after: readonly EndpointTable[], at: (...path: (string | number)[]) => number): Change[] {
  const changes: Change[] = [];
  const byName = new Map(before.map((endpoint) => [endpoint.name, endpoint]));
  // A lone endpoint named "0" is (most likely) a provider's base_url, which is where its line is.
  const single = after.length === 1 && after[0]!.name === '0';
  const lineOfEndpoint = (index: number, key?: string) => (single ? at(key ?? 'base_url') : at('endpoints', index, ...(key ? [key] : [])));
  after.forEach((endpoint, index) => {
    const was = byName.get(endpoint.name);
    byName.delete(endpoint.name);
    if (!was) {
      changes.push({ severity: 'safe', kind: 'endpoint_added', provider: id, after: describeEndpoint(endpoint), line: lineOfEndpoint(index) });
      return;
    }
    if (was.apiKeyEnv !== endpoint.apiKeyEnv) {
      const line = lineOfEndpoint(index, 'api_key_env');
      const endpointName = { endpoint: endpoint.name };
      if (endpoint.apiKeyEnv === null) changes.push({ severity: 'behaviour', kind: 'key_env_removed', provider: id, before: { ...endpointName, apiKeyEnv: was.apiKeyEnv }, after: { ...endpointName, apiKeyEnv: null }, line });
      else changes.push({ severity: 'breaking', kind: 'key_env_changed', provider: id, before: { ...endpointName, apiKeyEnv: was.apiKeyEnv }, after: { ...endpointName, apiKeyEnv: endpoint.apiKeyEnv }, line });
    }
    const { apiKeyEnv: _wasKey, ...wasRest } = was;
    const { apiKeyEnv: _key, ...rest } = endpoint;
    if (sameValue(wasRest, rest)) return;
    const moved = was.baseUrl !== endpoint.baseUrl || was.baseUrlEnv !== endpoint.baseUrlEnv;
    changes.push({ severity: moved ? 'behaviour' : 'safe', kind: 'endpoint_changed', provider: id, before: describeEndpoint(was), after: describeEndpoint(endpoint), line: lineOfEndpoint(index) });
  });
  for (const gone of byName.values()) changes.push({ severity: 'safe', kind: 'endpoint_removed', provider: id, before: describeEndpoint(gone) });
  return changes;
}

function describeEndpoint(endpoint: EndpointTable): { [key: string]: JsonValue } {
  return { name: endpoint.name, host: hostOf(endpoint), baseUrl: endpoint.baseUrl, baseUrlEnv: endpoint.baseUrlEnv, apiKeyEnv: endpoint.apiKeyEnv, weight: endpoint.weight };
}

/** Where the endpoint's traffic goes: the host (and port) of its base URL; base_url_env may override it where the gateway runs. */
function hostOf(endpoint: EndpointTable): string {
  return URL.canParse(endpoint.baseUrl) ? new URL(endpoint.baseUrl).host : endpoint.baseUrl;
}

function sortedEntries(map: Readonly<Record<string, string | undefined>>): [string, string | undefined][] {
  return Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
