import type { ErrorRuleSet, ResolvedErrorRule, RouteTables } from '../../src/generated/types/route-tables.js';
import { sameValue, type Change, type JsonValue, type LineOf } from './change.js';

/**
 * Error rules compared by their effect: for each rule key written on either side (an exact status, a class,
 * default) and each provider on both sides, the rule the gateway applies to that provider status, looked up
 * as the engine does (provider exact -> provider class -> global exact -> global class -> default).
 * A change that affects every provider alike is one item without a provider.
 */
export function classifyErrorRules(old: RouteTables, next: RouteTables, lineOf: LineOf): Change[] {
  const providers = Object.keys(next.providers).filter((id) => Object.hasOwn(old.providers, id)).sort();
  const keys = new Set([...Object.keys(old.errors), ...Object.keys(next.errors)]);
  for (const id of providers) for (const key of [...Object.keys(old.providers[id]!.errors), ...Object.keys(next.providers[id]!.errors)]) keys.add(key);
  const changes: Change[] = [];
  for (const key of [...keys].sort(byStatusKey)) {
    const differing = providers
      .map((id) => ({ id, before: effectiveRule(old, id, key), after: effectiveRule(next, id, key) }))
      .filter(({ before, after }) => !sameValue(before, after));
    if (differing.length === 0) continue;
    const first = differing[0]!;
    const uniform = differing.length === providers.length && differing.every(({ before, after }) => sameValue(before, first.before) && sameValue(after, first.after));
    const items = uniform ? [{ ...first, id: undefined }] : differing;
    for (const { id, before, after } of items) {
      const own = id !== undefined && Object.hasOwn(next.providers[id]!.errors, key);
      const line = own ? lineOf(['providers', id, 'errors', key]) : lineOf(['errors', key]);
      changes.push({ severity: 'behaviour', kind: 'error_rule_changed', ...(id ? { provider: id } : {}), before: describeRule(key, before), after: describeRule(key, after), line });
    }
  }
  return changes;
}

function effectiveRule(tables: RouteTables, providerId: string, key: string): ResolvedErrorRule | null {
  const own: ErrorRuleSet = tables.providers[providerId]!.errors;
  const status = Number(key);
  const statusClass = Number.isInteger(status) && status >= 400 && status < 600 ? `${Math.floor(status / 100)}xx` : null;
  const chain = key === 'default' ? [tables.errors['default']]
    : statusClass ? [own[key], own[statusClass], tables.errors[key], tables.errors[statusClass], tables.errors['default']]
    : key.endsWith('xx') ? [own[key], tables.errors[key], tables.errors['default']]
    : [own[key], tables.errors[key], tables.errors['default']];
  return chain.find((rule) => rule !== undefined) ?? null;
}

function describeRule(key: string, rule: ResolvedErrorRule | null): { [key: string]: JsonValue } {
  return rule ? { providerStatus: key, status: rule.status, type: rule.type, code: rule.code, gatewayCode: rule.gatewayCode, retry: rule.retry } : { providerStatus: key };
}

/** Exact statuses in numeric order, then classes, then default. */
function byStatusKey(a: string, b: string): number {
  const rank = (key: string) => (/^\d+$/.test(key) ? Number(key) : key === 'default' ? 2000 : 1000 + key.charCodeAt(0));
  return rank(a) - rank(b);
}
