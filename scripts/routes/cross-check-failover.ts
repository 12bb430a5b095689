import { BASE_URL_PATTERN, baseUrlProblem } from '../../src/routing/base-url-rules.js';
import { DEFAULT_BREAKER } from './resolve-routes.js';

type Report = (path: (string | number)[], at: 'key' | 'value', message: string) => void;

/** base_url xor endpoints, and each endpoint's own checks (URL sanity, unique names). */
export function checkEndpoints(id: string, provider: Record<string, unknown>, report: Report): void {
  const endpoints = provider['endpoints'];
  const hasList = endpoints !== undefined;
  if (hasList && provider['base_url'] !== undefined) report(['providers', id, 'endpoints'], 'key', 'a provider has base_url or endpoints, not both');
  // A bedrock provider's default is its region's endpoint.
  if (!hasList && provider['base_url'] === undefined && provider['dialect'] !== 'bedrock') report(['providers', id], 'key', 'needs base_url (one endpoint) or endpoints (several)');
  if (!hasList || !Array.isArray(endpoints)) return;
  // With a list, each endpoint carries its own URL and key: a provider-wide one would be ambiguous.
  for (const key of ['base_url_env', 'api_key_env']) {
    if (provider[key] !== undefined) report(['providers', id, key], 'key', `belongs on each endpoint when the provider has endpoints`);
  }
  const names = new Set<string>();
  endpoints.forEach((endpoint: unknown, index) => {
    if (endpoint === null || typeof endpoint !== 'object') return; // the schema reports it
    const entry = endpoint as Record<string, unknown>;
    const baseUrl = entry['base_url'];
    const problem = typeof baseUrl === 'string' && BASE_URL_PATTERN.test(baseUrl) ? baseUrlProblem(baseUrl) : null;
    if (problem) report(['providers', id, 'endpoints', index, 'base_url'], 'value', problem);
    const name = typeof entry['name'] === 'string' ? entry['name'] : String(index);
    if (names.has(name)) report(['providers', id, 'endpoints', index, ...(entry['name'] === undefined ? [] : ['name'])], 'value', `endpoint name ${JSON.stringify(name)} is used twice in this provider (an unnamed endpoint is named by its index)`);
    names.add(name);
  });
}

/** Whether the provider sends a key at all (its own api_key_env or any endpoint's). */
export function hasKey(provider: Record<string, unknown>): boolean {
  if (provider['api_key_env']) return true;
  const endpoints = provider['endpoints'];
  return Array.isArray(endpoints) && endpoints.some((endpoint: unknown) => endpoint !== null && typeof endpoint === 'object' && Boolean((endpoint as Record<string, unknown>)['api_key_env']));
}

/** fallback: other routing strings of the roster, each once. */
export function checkFallbacks(models: Record<string, unknown>, report: Report): void {
  for (const [model, value] of Object.entries(models)) {
    const fallback = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)['fallback'] : undefined;
    if (!Array.isArray(fallback)) continue;
    const seen = new Set<unknown>();
    fallback.forEach((target: unknown, index) => {
      if (typeof target !== 'string') return; // the schema reports it
      const path = ['models', model, 'fallback', index];
      if (target === model) report(path, 'value', 'a model cannot fall back to itself');
      else if (seen.has(target)) report(path, 'value', `${JSON.stringify(target)} is listed twice`);
      else if (!Object.hasOwn(models, target)) report(path, 'value', `${JSON.stringify(target)} is not on the roster`);
      seen.add(target);
    });
  }
}

/** max_cooldown_ms at least cooldown_ms, once inherited values are applied; reported where the breaker is written. */
export function checkBreaker(path: (string | number)[], own: unknown, inherited: unknown, report: Report): void {
  if (own === null || typeof own !== 'object') return;
  const pick = (key: string, fallback: number) => {
    for (const source of [own, inherited]) {
      const value = source !== null && typeof source === 'object' ? (source as Record<string, unknown>)[key] : undefined;
      if (typeof value === 'number') return value;
    }
    return fallback;
  };
  const cooldown = pick('cooldown_ms', DEFAULT_BREAKER.cooldownMs);
  const max = pick('max_cooldown_ms', DEFAULT_BREAKER.maxCooldownMs);
  if (max < cooldown) report(path, 'key', `max_cooldown_ms (${max}) is less than cooldown_ms (${cooldown})${path[0] === 'providers' ? ', counting what it inherits' : ''}`);
}
