import type { CallerTable, RouteTables } from '../../src/generated/types/route-tables.js';
import { sameValue, type Change, type JsonValue, type LineOf } from './change.js';

/**
 * Who may call, and what each caller can reach. Declaring callers in a file that had none is breaking: every key of
 * GATEWAY_API_KEYS (and anonymous access) then gets 401, and the gateway refuses to start while GATEWAY_API_KEYS is
 * set; dropping the section is breaking the other way (the callers' keys get 401). Otherwise per caller: losing a
 * model it could use and losing a key are breaking; gaining a model (listed model by model: access widened is what a
 * security reviewer must see), a new key and changed limits or budgets are behaviour. A model that left the roster
 * is reported once, as model_removed or planned_removal, not again per caller. A fallback that can answer a caller
 * with a model outside its `models` is shown when it is new.
 */
export function classifyCallers(old: RouteTables, next: RouteTables, lineOf: LineOf): Change[] {
  const had = Object.keys(old.callers);
  const has = Object.keys(next.callers);
  if (had.length === 0 && has.length === 0) return [];
  if (had.length > 0 && has.length === 0) {
    return [{ severity: 'breaking', kind: 'callers_removed', before: { callers: had.sort() }, after: null }];
  }
  const changes: Change[] = [];
  const declared = had.length === 0;
  if (declared) changes.push({ severity: 'breaking', kind: 'callers_declared', before: null, after: { callers: [...has].sort() }, line: lineOf(['callers']) });
  const roster = new Set(Object.keys(next.models));
  for (const caller of [...new Set([...had, ...has])].sort()) {
    const before = old.callers[caller];
    const after = next.callers[caller];
    const at = (...path: string[]) => lineOf(['callers', caller, ...path]);
    if (declared && after) {
      // Before, every key could use every model: the new callers gain nothing; what they may use is listed once.
      changes.push({ severity: 'behaviour', kind: 'caller_added', caller, after: { ...keys(after), models: [...after.models] }, line: at() });
    } else {
      changes.push(...compareModels(caller, before, after, roster, at));
    }
    changes.push(...outsideModels(caller, old, next, at));
    if (!before || !after) continue;
    const hadKeys = new Set(before.keyDigests);
    const hasKeys = new Set(after.keyDigests);
    const removedKeys = before.keyDigests.filter((digest) => !hasKeys.has(digest)).length;
    const addedKeys = after.keyDigests.filter((digest) => !hadKeys.has(digest)).length;
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

/** Digests are not printed: counts and env var names say enough to review. */
function keys(table: CallerTable): { keys: number; keyEnv: string | null } {
  return { keys: table.keyDigests.length, keyEnv: table.keyEnv };
}

function compareModels(caller: string, before: CallerTable | undefined, after: CallerTable | undefined, roster: ReadonlySet<string>, at: (...path: string[]) => number): Change[] {
  const changes: Change[] = [];
  const had = new Set(before?.models ?? []);
  const has = new Set(after?.models ?? []);
  for (const model of had) {
    if (!has.has(model) && roster.has(model)) changes.push({ severity: 'breaking', kind: 'caller_lost_model', caller, model, ...(after ? { line: at('models') } : {}) });
  }
  for (const model of has) {
    if (!had.has(model)) changes.push({ severity: 'behaviour', kind: 'caller_gained_model', caller, model, line: at('models') });
  }
  return changes;
}

/** Fallbacks that answer `caller` with a model outside its `models` in NEW and did not in OLD: one item per model and fallback. */
function outsideModels(caller: string, old: RouteTables, next: RouteTables, at: (...path: string[]) => number): Change[] {
  const now = reachedOutside(next, next.callers[caller]);
  if (now.size === 0) return [];
  const before = reachedOutside(old, old.callers[caller]);
  const changes: Change[] = [];
  for (const [pair, [model, fallback]] of now) {
    if (!before.has(pair)) changes.push({ severity: 'behaviour', kind: 'caller_served_outside_models', caller, model, after: fallback, line: at('models') });
  }
  return changes;
}

function reachedOutside(tables: RouteTables, caller: CallerTable | undefined): Map<string, [string, string]> {
  const pairs = new Map<string, [string, string]>();
  if (!caller) return pairs;
  const allowed = new Set(caller.models);
  for (const model of caller.models) {
    for (const fallback of tables.models[model]?.fallback ?? []) if (!allowed.has(fallback)) pairs.set(`${model}\n${fallback}`, [model, fallback]);
  }
  return pairs;
}
