import { gatewayError, type GatewayError } from '../wire/gateway-error.js';
import { isObject } from './json-values.js';

/**
 * The 400 for a gated field (DialectDefaults.gatedFields) that routes.yaml allow_fields does not list: it names the
 * field, says what it would let the caller do on the gateway's account, and where to allow it.
 */
export function gatedFieldError(field: string, why: string): GatewayError {
  return gatewayError('unsupported_parameter', `'${field}' is not allowed for this model: ${why}, so routes.yaml must allow it (allow_fields on the model or its provider).`, { param: field });
}

/**
 * Refuses, naming it (`tools[i].type`), the first tool whose type `gated` picks: a tool the provider runs and bills,
 * which routes.yaml has not allowed. Each dialect tells its own kind of tool and says in `message` what would allow it.
 */
export function refuseGatedTools(tools: unknown, gated: (type: unknown) => boolean, message: (param: string, type: unknown) => string): void {
  if (!Array.isArray(tools)) return;
  tools.forEach((tool: unknown, index) => {
    const type = isObject(tool) ? tool['type'] : undefined;
    if (!gated(type)) return;
    const param = `tools[${index}].type`;
    throw gatewayError('unsupported_parameter', message(param, type), { param });
  });
}
