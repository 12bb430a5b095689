import { createHash } from 'node:crypto';
import type { RouteTables } from '../../src/generated/types/route-tables.js';
import { crossCheckRoutes } from './cross-check-routes.js';
import { errorRuleWarnings } from './error-rule-warnings.js';
import { loadRoutes, type LoadedRoutes } from './load-routes.js';
import { sortProblems, type Problem } from './problem.js';
import { RENAMED, renamedInFile, type Renamed } from './renamed-keys.js';
import { resolveRoutes } from './resolve-routes.js';
import { validateRoutesShape } from './validate-routes.js';
import { dedentedProviderKeys } from './yaml-wording.js';
import { readSchema } from '../schemas.js';

/** `warnings`: what compiles but is probably not meant (printed by check and build, which still succeed). */
/** `locate` says where a path was written in the source (for messages about a file that compiled: review, warnings). */
export type CompileResult = { ok: true; tables: RouteTables; warnings: Problem[]; locate: LoadedRoutes['locate'] } | { ok: false; problems: Problem[] };

/** The keys of a provider entry, from the schema: one of them in the place of a provider id was dedented. */
const PROVIDER_KEYS: ReadonlySet<string> = new Set(Object.keys((readSchema('routes.schema.json') as { definitions: { Provider: { properties: object } } }).definitions.Provider.properties));

/** routes.yaml text -> engine tables, or every problem found (YAML, schema, cross-references) in file order. */
export function compileRoutes(text: string, options: { previousText?: string; renamed?: readonly Renamed[] } = {}): CompileResult {
  const loaded = loadRoutes(text);
  const problems = [...loaded.problems];
  if (loaded.data === undefined) return { ok: false, problems: sortProblems(problems) };
  const shape = validateRoutesShape(loaded);
  const dedented = dedentedProviderKeys(loaded, PROVIDER_KEYS);
  const renamed = renamedInFile(loaded, options.renamed ?? RENAMED);
  // A dedented or renamed key's own problem replaces what the schema and the cross-checks say of the same line.
  const own = [...dedented, ...renamed.keys];
  const lines = new Set(own.map((problem) => problem.line));
  problems.push(...[...shape.problems, ...crossCheckRoutes(loaded, previousModels(options.previousText))].filter((problem) => !lines.has(problem.line)), ...own);
  if (!shape.routes || problems.length > 0) return { ok: false, problems: sortProblems(problems) };
  const sha256 = createHash('sha256').update(text).digest('hex');
  return { ok: true, tables: resolveRoutes(shape.routes, sha256), warnings: sortProblems([...errorRuleWarnings(loaded), ...renamed.values]), locate: loaded.locate };
}

/** The roster of an earlier version of the file (the last commit's), so an out-of-order key just added is the one named. */
function previousModels(previousText: string | undefined): ReadonlySet<string> | undefined {
  if (previousText === undefined) return undefined;
  const models = (loadRoutes(previousText).data as { models?: unknown } | undefined)?.models;
  return models !== null && typeof models === 'object' ? new Set(Object.keys(models)) : undefined;
}
