import type { CallerTable, RouteTables } from '../../src/generated/types/route-tables.js';
import { sameValue, type Change, type JsonValue, type LineOf } from './change.js';

export type CallerTables = RouteTables['callers'];

/** The compiled callers (an empty map without a callers section). */
export function callersOf(tables: RouteTables): CallerTables {
  return tables.callers;
}

/**
 * What each caller can reach: losing a model it could use and losing a key are breaking; gaining a model
 * (listed model by model: access widened is what a security reviewer must see), a new key and changed
 * limits or budgets are behaviour. A model that left the roster is reported once, as model_removed or
 * planned_removal, not again per caller. A caller on one side only gains or loses all its models.
 */
export function classifyCallers(old: CallerTables | null, next: CallerTables | null, newRoster: ReadonlySet<string>, lineOf: LineOf): Change[] {
  if (old === null && next === null) return [];
  const changes: Change[] = [];
  const names = new Set([...Object.keys(old ?? {}), ...Object.keys(next ?? {})]);
  for (const caller of [...names].sort()) {
    const before = old?.[caller];
    const after = next?.[caller];
    const at = (...path: string[]) => lineOf(['callers', caller, ...path]);
    const had = new Set(before?.models ?? []);
    const has = new Set(after?.models ?? []);
    for (const model of had) {
      if (!has.has(model) && newRoster.has(model)) changes.push({ severity: 'breaking', kind: 'caller_lost_model', caller, model, ...(after ? { line: at('models') } : {}) });
    }
    for (const model of has) {
      if (!had.has(model)) changes.push({ severity: 'behaviour', kind: 'caller_gained_model', caller, model, line: at('models') });
    }
    if (!before || !after) continue;
    const removedKeys = before.keyDigests.filter((digest) => !after.keyDigests.includes(digest)).length;
    const addedKeys = after.keyDigests.filter((digest) => !before.keyDigests.includes(digest)).length;
    // Digests are not printed: counts and env var names say enough to review.
    const keys = (table: CallerTable): JsonValue => ({ keys: table.keyDigests.length, keyEnv: table.keyEnv });
    if (removedKeys > 0 || (before.keyEnv !== null && before.keyEnv !== after.keyEnv)) {
      changes.push({ severity: 'breaking', kind: 'caller_key_removed', caller, before: keys(before), after: keys(after), line: at() });
    }
    if (addedKeys > 0 || (after.keyEnv !== null && before.keyEnv === null)) {
      changes.push({ severity: 'behaviour', kind: 'caller_key_added', caller, before: keys(before), after: keys(after), line: at() });
    }
    const limits = (table: CallerTable): JsonValue => ({ ...table.limits, budget: table.budget ? { ...table.budget } : null });
    if (!sameValue(limits(before), limits(after))) {
      changes.push({ severity: 'behaviour', kind: 'limits_changed', caller, before: limits(before), after: limits(after), line: at() });
    }
  }
  return changes;
}
