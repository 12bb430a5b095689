import type { CallerEntry, RoutesFile } from '../../src/generated/types/routes.js';
import type { CallerTable, PriceTable, RouteTables } from '../../src/generated/types/route-tables.js';

type Report = (path: (string | number)[], at: 'key' | 'value', message: string) => void;

/**
 * The roster sorted once (code-unit order), for every caller's `models:`: an entry is a run of it, found by binary
 * search, and a caller's runs are merged, so expanding costs what it outputs, not patterns × roster.
 */
export class RosterIndex {
  private readonly sorted: readonly string[];
  private readonly position: ReadonlyMap<string, number>;

  constructor(roster: readonly string[]) {
    this.sorted = [...roster].sort();
    this.position = new Map(this.sorted.map((model, index) => [model, index]));
  }

  has(model: string): boolean {
    return this.position.has(model);
  }

  /** Whether a "prefix*" entry matches any routing string. */
  matchesAny(pattern: string): boolean {
    const [start, end] = this.run(pattern);
    return end > start;
  }

  /** `models:` entries of a caller: an exact routing string, or a prefix ending in "*"; default: every model. Sorted. */
  expand(entries: readonly string[] | undefined): string[] {
    if (entries === undefined) return [...this.sorted];
    const runs = entries.map((entry) => this.run(entry)).filter(([start, end]) => end > start).sort((a, b) => a[0] - b[0]);
    const models: string[] = [];
    let next = 0;
    for (const [start, end] of runs) {
      for (let index = Math.max(start, next); index < end; index++) models.push(this.sorted[index]!);
      next = Math.max(next, end);
    }
    return models;
  }

  /** [start, end) of the sorted roster an entry names. */
  private run(entry: string): [number, number] {
    if (!entry.endsWith('*')) {
      const index = this.position.get(entry);
      return index === undefined ? [0, 0] : [index, index + 1];
    }
    const prefix = entry.slice(0, -1);
    // Strings starting with the prefix sort from the prefix itself up to (not including) the prefix with its last
    // code unit raised by one. "*" alone is the whole roster; a prefix ending in U+FFFF has no such bound: scanned.
    const start = this.firstAtLeast(prefix);
    const last = prefix.charCodeAt(prefix.length - 1);
    if (prefix === '') return [0, this.sorted.length];
    if (last !== 0xffff) return [start, this.firstAtLeast(`${prefix.slice(0, -1)}${String.fromCharCode(last + 1)}`)];
    let end = start;
    while (end < this.sorted.length && this.sorted[end]!.startsWith(prefix)) end++;
    return [start, end];
  }

  private firstAtLeast(value: string): number {
    let low = 0;
    let high = this.sorted.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.sorted[mid]! < value) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/**
 * What a schema cannot say about `callers:` — digests unique across callers, models on the roster, prices where a budget
 * needs them. Reads the data defensively so it reports alongside schema problems.
 */
export function checkCallers(data: unknown, report: Report): void {
  const callers = mapAt(data, 'callers');
  const models = mapAt(data, 'models');
  const roster = new RosterIndex(Object.keys(models));
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
      if (entry.endsWith('*') ? !roster.matchesAny(entry) : !roster.has(entry)) {
        report(['callers', name, 'models', index], 'value', entry.endsWith('*') ? `${JSON.stringify(entry)} matches no routing string on the roster` : `${JSON.stringify(entry)} is not on the roster (a prefix pattern ends in "*")`);
      }
    });
    if (caller['budget'] !== undefined) {
      const usable = reachable(roster.expand(entries?.filter((entry): entry is string => typeof entry === 'string')), models);
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
  const roster = new RosterIndex(Object.keys(routes.models));
  const callers: Record<string, CallerTable> = {};
  for (const name of Object.keys(routes.callers ?? {}).sort()) {
    const entry: CallerEntry = routes.callers![name]!;
    callers[name] = {
      name,
      keyDigests: (entry.keys ?? []).map((key) => key.slice('sha256:'.length).toLowerCase()),
      keyEnv: entry.key_env ?? null,
      models: roster.expand(entry.models),
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
