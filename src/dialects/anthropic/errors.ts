import type { ProviderErrorDetails } from '../../wire/provider-error.js';
import { isObject, parseJson } from './json-values.js';

/** Anthropic's `{"type":"error","error":{"type","message"}}`, or undefined when `value` does not hold one. */
export function anthropicErrorOf(value: unknown): { type: string | null; message: string | null } | undefined {
  const error = isObject(value) ? value['error'] : undefined;
  if (!isObject(error)) return undefined;
  return { type: nonEmpty(error['type']), message: nonEmpty(error['message']) };
}

/**
 * A non-2xx body from Anthropic: provider_code is its error type (`overloaded_error`), the message is
 * kept verbatim. Bodies in another shape (a proxy's HTML page, a bare `{"message"}`) give what they
 * have; never throws.
 */
export function readAnthropicError(text: string): ProviderErrorDetails {
  const parsed = parseJson(text);
  const error = anthropicErrorOf(parsed);
  if (error && (error.type !== null || error.message !== null)) return { message: error.message, code: error.type };
  if (isObject(parsed) && typeof parsed['error'] === 'string') return { message: parsed['error'], code: null };
  return { message: isObject(parsed) && typeof parsed['message'] === 'string' ? parsed['message'] : null, code: null };
}

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}
