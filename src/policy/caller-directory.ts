import { hash } from 'node:crypto';
import type { CallerTable, RouteTables } from '../generated/types/route-tables.js';

type Env = Readonly<Record<string, string | undefined>>;

/** A start-up refusal about callers' keys (server.ts prints it and exits 1). */
export class CallerKeyError extends Error {
  override name = 'CallerKeyError';
}

export interface CallerDirectory {
  /** Hex sha256 of a key -> its caller. */
  readonly byDigest: ReadonlyMap<string, CallerTable>;
  readonly warnings: readonly string[];
}

/** The digest a key is known by: lower-case hex sha256, as routes.yaml's `sha256:` lines hold it. */
export function keyDigest(key: string): string {
  // One-shot: no Hash object per request (every request's key is digested to find its caller).
  return hash('sha256', key, 'hex');
}

/**
 * Every caller's keys by digest: the digests routes.yaml lists, and the keys of each key_env (comma-separated). The
 * build refused a digest under two callers; a key given in two places at run time (two key_env, or a key_env and
 * another caller's digest) is refused here, since one key must name one caller.
 */
export function callerDirectory(tables: RouteTables, env: Env): CallerDirectory {
  const byDigest = new Map<string, CallerTable>();
  const warnings: string[] = [];
  const add = (digest: string, caller: CallerTable, where: string) => {
    const owner = byDigest.get(digest);
    if (owner && owner !== caller) throw new CallerKeyError(`a key of caller "${caller.name}" (${where}) is also a key of caller "${owner.name}": a key belongs to one caller`);
    byDigest.set(digest, caller);
  };
  for (const caller of Object.values(tables.callers)) {
    if (!caller) continue;
    for (const digest of caller.keyDigests) add(digest, caller, 'routes.yaml');
  }
  for (const caller of Object.values(tables.callers)) {
    if (!caller?.keyEnv) continue;
    const keys = (env[caller.keyEnv] ?? '').split(',').map((key) => key.trim()).filter((key) => key !== '');
    if (keys.some((key) => /[\s\u0000-\u001f\u007f]/.test(key))) throw new CallerKeyError(`${caller.keyEnv}: a key contains white space or control characters`);
    if (keys.length === 0) warnings.push(`caller "${caller.name}": ${caller.keyEnv} holds no key${caller.keyDigests.length === 0 ? ', so this caller cannot call' : ''}`);
    for (const key of keys) add(keyDigest(key), caller, caller.keyEnv);
  }
  return { byDigest, warnings };
}
