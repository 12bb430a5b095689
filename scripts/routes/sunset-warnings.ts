import type { RouteTables } from '../../src/generated/types/route-tables.js';
import { dateMs } from './cross-check-deprecation.js';
import type { LoadedRoutes } from './load-routes.js';
import { formatPath, type Problem } from './problem.js';

/**
 * Every deprecated model whose sunset has passed: the gateway still serves it (only a reviewed removal
 * removes a model), so `npm run check` reminds ops that the planned removal is due.
 */
export function passedSunsets(tables: RouteTables, locate: LoadedRoutes['locate'], now = Date.now()): Problem[] {
  const warnings: Problem[] = [];
  for (const [model, entry] of Object.entries(tables.models)) {
    const sunset = entry?.deprecated?.sunset;
    const sunsetMs = sunset === undefined ? null : dateMs(sunset);
    if (sunsetMs === null || sunsetMs > now) continue;
    const path = ['models', model, 'deprecated', 'sunset'];
    const replacement = entry?.deprecated?.replacement;
    const move = replacement ? `; callers should be on ${JSON.stringify(replacement)}` : '';
    warnings.push({ ...locate(path), message: `warning: ${formatPath(path)}: ${sunset} has passed; the model is still served until a reviewed change removes it${move}` });
  }
  return warnings.sort((a, b) => a.line - b.line || a.col - b.col);
}
