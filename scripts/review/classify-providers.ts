import type { EndpointTable, ProviderTable, RouteTables } from '../../src/generated/types/route-tables.js';
import { sameValue, toJson, type Change, type JsonValue, type LineOf, type Severity } from './change.js';

/** Settings whose change callers do not see in what they get back: timeouts, breaker, usage requests, key header. */
const TUNING_KEYS = ['connectTimeoutMs', 'timeoutMs', 'streamIdleTimeoutMs', 'streamUsage', 'breaker', 'auth'] as const;

/**
 * Providers added and removed, their dialect, endpoints, static headers and tuning, and max_attempts.
 * `modelSeverity` says how the removal of each removed routing string was classified, so that removing a
 * provider is as severe as removing its models (a planned removal of all of them is not breaking).
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
      changes.push({ severity: 'safe', kind: 'provider_added', provider: id, after: { dialect: after.dialect, endpoints }, line: lineOf(['providers', id]) });
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
  const dialectChanged = before.dialect !== after.dialect;
  if (dialectChanged) {
    changes.push({ severity: 'breaking', kind: 'dialect_changed', provider: id, before: before.dialect, after: after.dialect, line: at('dialect') });
  }
  changes.push(...compareEndpoints(id, before.endpoints, after.endpoints, at));
  // Another dialect brings its own default headers and key header: part of dialect_changed, not repeated.
  if (!dialectChanged && !sameValue(sortedEntries(before.headers), sortedEntries(after.headers))) {
    // Static headers reach the provider with every request and can change what it does (an API version, a beta).
    changes.push({ severity: 'behaviour', kind: 'headers_changed', provider: id, before: toJson(before.headers), after: toJson(after.headers), line: at('headers') });
  }
  const was: { [key: string]: JsonValue } = {};
  const now: { [key: string]: JsonValue } = {};
  for (const key of TUNING_KEYS) {
    if (sameValue(before[key], after[key]) || (dialectChanged && key === 'auth')) continue;
    was[key] = toJson(before[key]);
    now[key] = toJson(after[key]);
  }
  if (Object.keys(was).length > 0) {
    const firstKey = Object.keys(was)[0]!;
    changes.push({ severity: 'safe', kind: 'provider_changed', provider: id, before: was, after: now, line: at(YAML_KEYS[firstKey] ?? firstKey) });
  }
  return changes;
}

/** The routes.yaml key of a compiled field, to point at its line. */
const YAML_KEYS: Record<string, string> = {
  connectTimeoutMs: 'connect_timeout_ms',
  timeoutMs: 'timeout_ms',
  streamIdleTimeoutMs: 'stream_idle_timeout_ms',
  streamUsage: 'stream_usage',
};

/** Endpoints by name: a new base URL sends callers' requests to another server (behaviour); weights and keys are tuning. */
function compareEndpoints(id: string, before: readonly EndpointTable[], after: readonly EndpointTable[], at: (...path: (string | number)[]) => number): Change[] {
  const changes: Change[] = [];
  const byName = new Map(before.map((endpoint) => [endpoint.name, endpoint]));
  // A lone endpoint named "0" is (most likely) a provider's base_url, which is where its line is.
  const lineOfEndpoint = (index: number) => (after.length === 1 && after[0]!.name === '0' ? at('base_url') : at('endpoints', index));
  after.forEach((endpoint, index) => {
    const was = byName.get(endpoint.name);
    byName.delete(endpoint.name);
    if (!was) {
      changes.push({ severity: 'safe', kind: 'endpoint_added', provider: id, after: describeEndpoint(endpoint), line: lineOfEndpoint(index) });
      return;
    }
    if (sameValue(was, endpoint)) return;
    const moved = was.baseUrl !== endpoint.baseUrl || was.baseUrlEnv !== endpoint.baseUrlEnv;
    changes.push({ severity: moved ? 'behaviour' : 'safe', kind: 'endpoint_changed', provider: id, before: describeEndpoint(was), after: describeEndpoint(endpoint), line: lineOfEndpoint(index) });
  });
  for (const gone of byName.values()) changes.push({ severity: 'safe', kind: 'endpoint_removed', provider: id, before: describeEndpoint(gone) });
  return changes;
}

function describeEndpoint(endpoint: EndpointTable): { [key: string]: JsonValue } {
  return { name: endpoint.name, baseUrl: endpoint.baseUrl, baseUrlEnv: endpoint.baseUrlEnv, apiKeyEnv: endpoint.apiKeyEnv, weight: endpoint.weight };
}

function sortedEntries(map: Readonly<Record<string, string | undefined>>): [string, string | undefined][] {
  return Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
