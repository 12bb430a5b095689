import type { ModelTable } from '../generated/types/route-tables.js';
import { gatewayError } from '../wire/gateway-error.js';

/**
 * The roster entry for a routing string: one exact lookup. No default model, no guessing,
 * no case folding: a string that is not on the roster is a 400 and nothing goes upstream.
 */
export function resolveRoute(roster: ReadonlyMap<string, ModelTable>, routingString: string): ModelTable {
  const route = roster.get(routingString);
  if (route) return route;
  const printable = JSON.stringify(routingString.length > 200 ? `${routingString.slice(0, 200)}…` : routingString);
  if (!routingString.includes('/')) {
    throw gatewayError(
      'missing_provider_prefix',
      `The model ${printable} has no provider prefix; use a routing string of the form <provider>/<model>${example(roster)}.`,
      { param: 'model' },
    );
  }
  throw gatewayError('unknown_model', `The model ${printable} is not on this gateway's roster.`, { param: 'model' });
}

/** An example from the roster itself: the engine names no provider of its own. */
function example(roster: ReadonlyMap<string, ModelTable>): string {
  const first = roster.keys().next();
  return first.done ? '' : `, e.g. ${JSON.stringify(first.value)}`;
}
