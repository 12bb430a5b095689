import type { RouteTables } from '../../src/generated/types/route-tables.js';
import { sortIntoSections, type LineOf, type Review, type Severity } from './change.js';
import { classifyCallers } from './classify-callers.js';
import { classifyErrorRules } from './classify-errors.js';
import { classifyModels } from './classify-models.js';
import { classifyProviders } from './classify-providers.js';
import { unclassifiedChanges } from './fields.js';

/** Every difference between two compiled tables, sorted into breaking, behaviour and safe (one no classifier claims is behaviour). */
export function reviewChange(old: RouteTables, next: RouteTables, lineOf: LineOf, now = Date.now()): Review {
  const models = classifyModels(old, next, lineOf, now);
  const removalSeverity = new Map<string, Severity>();
  for (const change of models) {
    if ((change.kind === 'model_removed' || change.kind === 'planned_removal') && change.model) removalSeverity.set(change.model, change.severity);
  }
  return sortIntoSections([
    ...models,
    ...classifyProviders(old, next, lineOf, removalSeverity),
    ...classifyErrorRules(old, next, lineOf),
    ...classifyCallers(old, next, lineOf),
    ...unclassifiedChanges(old, next, lineOf),
  ]);
}
