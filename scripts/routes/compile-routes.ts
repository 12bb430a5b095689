import { createHash } from 'node:crypto';
import type { RouteTables } from '../../src/generated/types/route-tables.js';
import { crossCheckRoutes } from './cross-check-routes.js';
import { errorRuleWarnings } from './error-rule-warnings.js';
import { loadRoutes } from './load-routes.js';
import { sortProblems, type Problem } from './problem.js';
import { resolveRoutes } from './resolve-routes.js';
import { validateRoutesShape } from './validate-routes.js';

/** `warnings`: what compiles but is probably not meant (printed by check and build, which still succeed). */
export type CompileResult = { ok: true; tables: RouteTables; warnings: Problem[] } | { ok: false; problems: Problem[] };

/** routes.yaml text -> engine tables, or every problem found (YAML, schema, cross-references) in file order. */
export function compileRoutes(text: string): CompileResult {
  const loaded = loadRoutes(text);
  const problems = [...loaded.problems];
  if (loaded.data === undefined) return { ok: false, problems: sortProblems(problems) };
  const shape = validateRoutesShape(loaded);
  problems.push(...shape.problems, ...crossCheckRoutes(loaded));
  if (!shape.routes || problems.length > 0) return { ok: false, problems: sortProblems(problems) };
  const sha256 = createHash('sha256').update(text).digest('hex');
  return { ok: true, tables: resolveRoutes(shape.routes, sha256), warnings: sortProblems(errorRuleWarnings(loaded)) };
}
