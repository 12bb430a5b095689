import type { ModelTable } from '../generated/types/route-tables.js';
import type { ModelKind } from '../dialects/dialect.js';
import { gatewayError } from '../wire/gateway-error.js';

/** routes.yaml `kind` of a roster entry: absent is chat. */
export function kindOf(route: ModelTable): ModelKind {
  return route.kind ?? 'chat';
}

/**
 * Each endpoint serves one kind of model: a chat model on the embeddings endpoint, or an embedding model on a
 * chat one, is the caller's mistake, refused before anything is sent (docs/embeddings.md).
 */
export function refuseOtherKind(route: ModelTable, routingString: string, served: ModelKind): void {
  const kind = kindOf(route);
  if (kind === served) return;
  const printable = JSON.stringify(routingString.length > 200 ? `${routingString.slice(0, 200)}…` : routingString);
  const where = served === 'embedding' ? 'POST /v1/embeddings serves kind: embedding models only' : 'this endpoint serves kind: chat models; use POST /v1/embeddings';
  throw gatewayError('invalid_request', `The model ${printable} is kind: ${kind} (routes.yaml); ${where}.`, { code: 'wrong_model_kind', param: 'model' });
}
