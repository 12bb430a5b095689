import type { ProviderErrorDetails } from '../../wire/provider-error.js';
import { isObject, parseJson } from '../json-values.js';

/** Google's `{"error":{code,message,status}}`, also when wrapped in an array (streaming endpoints do); undefined when `value` holds none. */
export function googleErrorOf(value: unknown): { status: string | null; message: string | null } | undefined {
  const wrapper = Array.isArray(value) && value.length > 0 ? value[0] : value;
  const error = isObject(wrapper) ? wrapper['error'] : undefined;
  if (!isObject(error)) return undefined;
  return { status: nonEmpty(error['status']), message: nonEmpty(error['message']) };
}

/**
 * A non-2xx body from Google: provider_code is its status word (`RESOURCE_EXHAUSTED`), the message is kept
 * verbatim. A body in another shape (a proxy's HTML page) gives nothing; never throws.
 */
export function readGeminiError(text: string): ProviderErrorDetails {
  const error = googleErrorOf(parseJson(text));
  return { message: error?.message ?? null, code: error?.status ?? null };
}

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value.slice(0, 2000) : null;
}
