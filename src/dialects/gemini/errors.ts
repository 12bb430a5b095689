import type { StreamFailure } from '../dialect.js';
import type { ProviderErrorDetails } from '../../wire/provider-error.js';
import { isObject, parseJson } from '../json-values.js';

/** What Google's `{"error":{code,message,status}}` says; null where it says nothing usable. */
export interface GoogleError {
  /** The HTTP status it stands for (`code`), when that is one. */
  readonly code: number | null;
  /** Its status word (`RESOURCE_EXHAUSTED`). */
  readonly status: string | null;
  readonly message: string | null;
}

/** Google's `{"error":{code,message,status}}`, also when wrapped in an array (streaming endpoints do); undefined when `value` holds none. */
export function googleErrorOf(value: unknown): GoogleError | undefined {
  const wrapper = Array.isArray(value) && value.length > 0 ? value[0] : value;
  const error = isObject(wrapper) ? wrapper['error'] : undefined;
  if (!isObject(error)) return undefined;
  const code = error['code'];
  return { code: Number.isInteger(code) && (code as number) >= 400 && (code as number) <= 599 ? (code as number) : null, status: nonEmpty(error['status']), message: nonEmpty(error['message']) };
}

/**
 * A non-2xx body from Google: provider_code is its status word (`RESOURCE_EXHAUSTED`), the message is kept
 * verbatim. A body in another shape (a proxy's HTML page) gives nothing; never throws.
 */
export function readGeminiError(text: string): ProviderErrorDetails {
  const error = googleErrorOf(parseJson(text));
  return { message: error?.message ?? null, code: error?.status ?? null };
}

/**
 * The HTTP status Google answers with for each status word (google.rpc.Code's mapping), for an error record
 * that carries the word but no HTTP `code`.
 */
const STATUS_OF_WORD: Readonly<Record<string, number>> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ABORTED: 409,
  ALREADY_EXISTS: 409,
  RESOURCE_EXHAUSTED: 429,
  CANCELLED: 499,
  UNKNOWN: 500,
  INTERNAL: 500,
  DATA_LOSS: 500,
  UNIMPLEMENTED: 501,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
};

/**
 * An error record in the stream as the HTTP failure it stands for: its `code` (Google puts the HTTP status
 * there), else its status word's status, else 500; the details as readGeminiError reads the same error
 * answered over HTTP. Before the first event the engine answers it exactly as that answer (error rules,
 * failover, breaker): an in-band 429 is a 429, an in-band 400 a 400.
 */
export function geminiStreamFailure(error: GoogleError | undefined): StreamFailure {
  const byWord = error?.status != null && Object.hasOwn(STATUS_OF_WORD, error.status) ? STATUS_OF_WORD[error.status] : undefined;
  return { status: error?.code ?? byWord ?? 500, details: { message: error?.message ?? null, code: error?.status ?? null } };
}

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value.slice(0, 2000) : null;
}
