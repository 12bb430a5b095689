import { gatewayError, type GatewayError } from '../wire/gateway-error.js';

/**
 * The 400 for a gated field (DialectDefaults.gatedFields) that routes.yaml allow_fields does not list: it names the
 * field, says what it would let the caller do on the gateway's account, and where to allow it.
 */
export function gatedFieldError(field: string, why: string): GatewayError {
  return gatewayError('unsupported_parameter', `'${field}' is not allowed for this model: ${why}, so routes.yaml must allow it (allow_fields on the model or its provider).`, { param: field });
}
