import { gatewayError, type GatewayError } from '../wire/gateway-error.js';

/** A JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A 400 naming the field whose value is not what the format allows. */
export function invalidField(param: string, message: string): GatewayError {
  return gatewayError('invalid_request', message, { param });
}

/** A 400 naming a field this gateway cannot honour. */
export function unsupportedField(param: string, message: string): GatewayError {
  return gatewayError('unsupported_parameter', message, { param });
}

/** A short, printable rendering of a caller's value for an error message. */
export function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/** `value` when it is a string; else a 400 naming `param`. */
export function stringField(value: unknown, param: string): string {
  if (typeof value !== 'string') throw invalidField(param, `Invalid '${param}': expected a string.`);
  return value;
}

/** Copies the fields present in `from` (not undefined) into `to`. */
export function copyPresent(from: Record<string, unknown>, to: Record<string, unknown>, keys: readonly string[]): void {
  for (const key of keys) if (from[key] !== undefined) to[key] = from[key];
}

/**
 * Refuses any top-level field outside `known`, naming it: what the gateway does not read it cannot honour.
 * `docsPage` is the page listing what the endpoint reads (docs/responses.md).
 */
export function refuseUnknown(body: Record<string, unknown>, known: ReadonlySet<string>, endpoint: string, docsPage: string): void {
  for (const key of Object.keys(body)) {
    if (!known.has(key)) throw unsupportedField(key, `'${key.slice(0, 60)}' is not supported on ${endpoint} by this gateway (${docsPage}).`);
  }
}
