import type { IncomingHttpHeaders } from 'node:http';
import type { StreamFailure } from '../dialect.js';
import type { ProviderErrorDetails } from '../../wire/provider-error.js';
import { isObject, parseJson } from '../json-values.js';

/**
 * A non-2xx answer from Bedrock: provider_code is the exception's name, from the `x-amzn-errortype` header
 * (`ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/`: the part before `:`), else the
 * body's `__type` (its part after `#`); the message (`message`, or `Message`) is kept verbatim. Never throws.
 */
export function readBedrockError(text: string, headers: IncomingHttpHeaders = {}): ProviderErrorDetails {
  const body = parseJson(text);
  const fields = isObject(body) ? body : {};
  const header = headers['x-amzn-errortype'];
  const fromHeader = typeof header === 'string' ? header.split(':')[0]!.trim() : '';
  const type = typeof fields['__type'] === 'string' ? fields['__type'].split('#').at(-1)!.split(':')[0]!.trim() : '';
  return { message: messageOf(fields), code: bounded(fromHeader) ?? bounded(type) };
}

/** `message`, else `Message` (Bedrock spells it both ways). */
export function messageOf(fields: Record<string, unknown>): string | null {
  return bounded(fields['message']) ?? bounded(fields['Message']);
}

/** The HTTP status of each exception ConverseStream may send in the stream (as the API answers it over HTTP). */
const STATUS_OF_EXCEPTION: Readonly<Record<string, number>> = {
  throttlingException: 429,
  validationException: 400,
  modelStreamErrorException: 424,
  internalServerException: 500,
  serviceUnavailableException: 503,
  modelTimeoutException: 408,
  accessDeniedException: 403,
  resourceNotFoundException: 404,
  serviceQuotaExceededException: 429,
};

/** An exception message of the stream as the HTTP failure it stands for: its status (500 when unknown), its type as provider_code, its message verbatim. */
export function bedrockStreamFailure(exceptionType: string | undefined, payload: unknown): StreamFailure {
  const known = exceptionType !== undefined && Object.hasOwn(STATUS_OF_EXCEPTION, exceptionType) ? STATUS_OF_EXCEPTION[exceptionType] : undefined;
  return { status: known ?? 500, details: { message: isObject(payload) ? messageOf(payload) : null, code: bounded(exceptionType) } };
}

function bounded(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value.slice(0, 2000) : null;
}
