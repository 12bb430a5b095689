import type { ModelTable } from '../generated/types/route-tables.js';
import type { ModelKind } from '../dialects/dialect.js';
import { gatewayError } from '../wire/gateway-error.js';

/**
 * The roster entry for a routing string: one exact lookup. No default model, no guessing,
 * no case folding: a string that is not on the roster is a 400 and nothing goes upstream.
 */
export function resolveRoute(roster: ReadonlyMap<string, ModelTable>, routingString: string): ModelTable {
  const route = roster.get(routingString);
  if (route) return route;
  const printable = printableModel(routingString);
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

/**
 * Each endpoint serves one kind of model (routes.yaml `kind`, absent: chat): a chat model on the embeddings
 * endpoint, or an embedding model on a chat one, is the caller's mistake, refused before anything is sent.
 */
export function refuseOtherKind(route: ModelTable, routingString: string, served: ModelKind): void {
  const kind = route.kind ?? 'chat';
  if (kind === served) return;
  const printable = printableModel(routingString);
  const where = served === 'embedding' ? 'POST /v1/embeddings serves kind: embedding models only' : 'this endpoint serves kind: chat models; use POST /v1/embeddings';
  throw gatewayError('invalid_request', `The model ${printable} is kind: ${kind} (routes.yaml); ${where}.`, { code: 'wrong_model_kind', param: 'model' });
}

/** The caller's `model` quoted for a message, cut at 200 characters. */
function printableModel(routingString: string): string {
  return JSON.stringify(routingString.length > 200 ? `${routingString.slice(0, 200)}…` : routingString);
}
