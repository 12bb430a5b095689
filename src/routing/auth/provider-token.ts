import type { OutgoingRequest } from '../../dialects/dialect.js';
import { gatewayError } from '../../wire/gateway-error.js';
import type { GoogleTokenSource } from './google.js';

/**
 * The outgoing request with the provider's current access token as its bearer, for a provider whose
 * credentials are a token (routes.yaml `auth: google`). With no valid token the gateway answers its own
 * 503 `provider_auth_failed` (retryable: another endpoint or a fallback may serve) and calls nobody: a
 * request with an empty bearer would only earn an opaque 401.
 */
export function withProviderToken(providerId: string, tokens: GoogleTokenSource | null, outgoing: OutgoingRequest): OutgoingRequest {
  if (tokens === null) return outgoing;
  const token = tokens.current();
  if (token === undefined) {
    throw gatewayError('provider_auth_failed', `The gateway holds no valid Google access token for the provider "${providerId}" (auth: google); see its log.`, {
      provider: providerId,
    });
  }
  return { ...outgoing, headers: { ...outgoing.headers, authorization: `Bearer ${token}` } };
}
