// What the soak's parts share: its routes (compiled by the real compiler) and a few random helpers.
import { readFileSync } from 'node:fs';
import type { RouteTables } from '../../src/generated/types/route-tables.js';
import { compileRoutes } from '../routes/compile-routes.js';

export const SOAK_ROUTES_FILE = new URL('./soak-routes.yaml', import.meta.url);
/** The env var every soak provider's base_url_env names, and the key the keyed provider sends. */
export const PROVIDER_URL_ENV = 'SOAK_PROVIDER_URL';
export const PROVIDER_KEY_ENV = 'SOAK_PROVIDER_KEY';
export const PROVIDER_KEY = 'sk-soak-provider-key-0d9c';

/** One routing string as the callers send it and as the mock provider should receive it. */
export interface SoakModel {
  readonly routing: string;
  readonly provider: string;
  readonly upstream: string;
  /** The Authorization header the provider must receive, or null for a keyless provider. */
  readonly authorization: string | null;
  /** The gateway asks this provider for usage on streams (stream_usage). */
  readonly streamUsage: boolean;
}

export interface SoakRoutes {
  readonly tables: RouteTables;
  readonly models: readonly SoakModel[];
  /** The largest of every provider's connect, response and stream-idle timeouts. */
  readonly largestTimeoutMs: number;
  readonly describeTimeouts: string;
}

export function loadSoakRoutes(): SoakRoutes {
  const compiled = compileRoutes(readFileSync(SOAK_ROUTES_FILE, 'utf8'));
  if (!compiled.ok) throw new Error(`scripts/soak/soak-routes.yaml does not compile: ${JSON.stringify(compiled.problems)}`);
  const { tables } = compiled;
  const providers = Object.values(tables.providers).filter((table) => table !== undefined);
  const models = Object.entries(tables.models).flatMap(([routing, model]) => {
    const provider = model && tables.providers[model.provider];
    if (!model || !provider) return [];
    const authorization = provider.endpoints.some((endpoint) => endpoint.apiKeyEnv) ? `Bearer ${PROVIDER_KEY}` : null;
    return [{ routing, provider: provider.id, upstream: model.upstreamModel, authorization, streamUsage: provider.streamUsage }];
  });
  const largestTimeoutMs = Math.max(...providers.flatMap((p) => [p.connectTimeoutMs, p.timeoutMs, p.streamIdleTimeoutMs]));
  const describeTimeouts = providers
    .map((p) => `${p.id}: connect ${p.connectTimeoutMs} ms, timeout ${p.timeoutMs} ms, stream idle ${p.streamIdleTimeoutMs} ms`)
    .join('; ');
  return { tables, models, largestTimeoutMs, describeTimeouts };
}

/** An integer in [min, max]. */
export function randomInt(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}

export function chance(probability: number): boolean {
  return Math.random() < probability;
}

export function pick<T>(items: readonly T[]): T {
  if (items.length === 0) throw new Error('pick from an empty list');
  return items[Math.floor(Math.random() * items.length)] as T;
}

/** One key of `weights`, with probability proportional to its weight. */
export function pickWeighted<K extends string>(weights: Readonly<Record<K, number>>): K {
  const entries = Object.entries(weights) as [K, number][];
  let roll = Math.random() * entries.reduce((sum, [, weight]) => sum + weight, 0);
  for (const [key, weight] of entries) {
    roll -= weight;
    if (roll < 0) return key;
  }
  return entries[entries.length - 1]![0];
}

/** Env integer with a default; refuses anything but a positive integer. */
export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, not ${JSON.stringify(raw)}`);
  return value;
}
