import type { CallerEntry, RoutesFile } from '../../src/generated/types/routes.js';
import type { CallerTable, PriceTable, RouteTables } from '../../src/generated/types/route-tables.js';

type Report = (path: (string | number)[], at: 'key' | 'value', message: string) => void;

/** `models:` entries of a caller: an exact routing string, or a prefix ending in "*". */
export function expandModels(entries: readonly string[] | undefined, roster: readonly string[]): string[] {
  if (entries === undefined) return [...roster].sort();
  const allowed = new Set<string>();
  for (const entry of entries) {
    if (entry.endsWith('*')) {
      const prefix = entry.slice(0, -1);
      for (const model of roster) if (model.startsWith(prefix)) allowed.add(model);
    } else if (roster.includes(entry)) allowed.add(entry);
  }
  return [...allowed].sort();
}

/**
 * What a schema cannot say about `callers:` — digests unique across callers, models on the roster, prices where a budget
 * needs them. Reads the data defensively so it reports alongside schema problems.
 */
export function checkCallers(data: unknown, report: Report): void {
  const callers = mapAt(data, 'callers');
  const models = mapAt(data, 'models');
  const roster = Object.keys(models);
  const digestOwner = new Map<string, string>();
  const envOwner = new Map<string, string>();
  for (const [name, value] of Object.entries(callers)) {
    const caller = mapAt({ value }, 'value');
    const keys = caller['keys'];
    if (keys === undefined && caller['key_env'] === undefined) report(['callers', name], 'key', 'needs keys (sha256 digests) or key_env, or it could never be used');
    if (Array.isArray(keys)) {
      keys.forEach((key: unknown, index) => {
        if (typeof key !== 'string' || !/^sha256:[0-9a-fA-F]{64}$/.test(key)) return; // the schema reports it
        const digest = key.slice(7).toLowerCase();
        const owner = digestOwner.get(digest);
        if (owner === name) report(['callers', name, 'keys', index], 'value', 'this digest is listed twice');
        else if (owner !== undefined) report(['callers', name, 'keys', index], 'value', `this digest is also a key of caller ${JSON.stringify(owner)}: a key belongs to one caller`);
        digestOwner.set(digest, name);
      });
    }
    const keyEnv = caller['key_env'];
    if (typeof keyEnv === 'string') {
      const owner = envOwner.get(keyEnv);
      if (owner !== undefined) report(['callers', name, 'key_env'], 'value', `${keyEnv} is also the key_env of caller ${JSON.stringify(owner)}: a key belongs to one caller`);
      envOwner.set(keyEnv, name);
    }
    const entries = Array.isArray(caller['models']) ? (caller['models'] as unknown[]) : undefined;
    entries?.forEach((entry, index) => {
      if (typeof entry !== 'string') return;
      if (entry.endsWith('*') ? expandModels([entry], roster).length === 0 : !roster.includes(entry)) {
        report(['callers', name, 'models', index], 'value', entry.endsWith('*') ? `${JSON.stringify(entry)} matches no routing string on the roster` : `${JSON.stringify(entry)} is not on the roster (a prefix pattern ends in "*")`);
      }
    });
    if (caller['budget'] !== undefined) {
      const usable = reachable(expandModels(entries?.filter((entry): entry is string => typeof entry === 'string'), roster), models);
      const unpriced = usable.filter((model) => mapAt(models, model)['price'] === undefined);
      if (unpriced.length > 0) {
        const listed = unpriced.slice(0, 5).map((model) => JSON.stringify(model)).join(', ') + (unpriced.length > 5 ? `, and ${unpriced.length - 5} more` : '');
        report(['callers', name, 'budget'], 'key', `needs a price on every model this caller may use (fallbacks included); without one: ${listed}`);
      }
    }
  }
}

/** The allowed models and every fallback they may be served by: what a budget has to be able to price. */
function reachable(allowed: readonly string[], models: Record<string, unknown>): string[] {
  const seen = new Set(allowed);
  for (const model of allowed) {
    const fallback = mapAt(models, model)['fallback'];
    if (Array.isArray(fallback)) for (const target of fallback) if (typeof target === 'string' && Object.hasOwn(models, target)) seen.add(target);
  }
  return [...seen].sort();
}

/** The compiled callers: digests bare and lower-case, patterns expanded to exact sorted sets. */
export function resolveCallers(routes: RoutesFile): RouteTables['callers'] {
  const roster = Object.keys(routes.models);
  const callers: Record<string, CallerTable> = {};
  for (const name of Object.keys(routes.callers ?? {}).sort()) {
    const entry: CallerEntry = routes.callers![name]!;
    callers[name] = {
      name,
      keyDigests: (entry.keys ?? []).map((key) => key.slice('sha256:'.length).toLowerCase()),
      keyEnv: entry.key_env ?? null,
      models: expandModels(entry.models, roster),
      limits: {
        requestsPerMinute: entry.limits?.requests_per_minute ?? null,
        tokensPerMinute: entry.limits?.tokens_per_minute ?? null,
        concurrentRequests: entry.limits?.concurrent_requests ?? null,
      },
      budget: entry.budget ? { usdPerMonth: entry.budget.usd_per_month ?? null, usdPerDay: entry.budget.usd_per_day ?? null } : null,
    };
  }
  return callers;
}

export function resolvePrice(price: { input_per_mtok: number; output_per_mtok: number; cached_input_per_mtok?: number; cache_write_per_mtok?: number } | undefined): PriceTable | null {
  if (!price) return null;
  return {
    inputPerMtok: price.input_per_mtok,
    outputPerMtok: price.output_per_mtok,
    cachedInputPerMtok: price.cached_input_per_mtok ?? null,
    cacheWritePerMtok: price.cache_write_per_mtok ?? null,
  };
}

function mapAt(data: unknown, key: string): Record<string, unknown> {
  const value = data !== null && typeof data === 'object' ? (data as Record<string, unknown>)[key] : undefined;
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
