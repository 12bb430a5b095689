import { createHmac, randomBytes } from 'node:crypto';

/**
 * The most bytes any line the gateway logs can have, newline included (docs/observability.md, Logs). Every field that
 * holds text from a caller, a provider or an error is cut or fingerprinted below so that this holds;
 * test/observe/log-bounds.test.ts sends hostile paths, headers and model strings and checks every line against it.
 */
export const MAX_LOG_LINE_BYTES = 4096;

/** Longest path logged; longer ones are cut and end in `…`. */
export const MAX_LOGGED_PATH_CHARS = 128;
/** Longest error description logged (class and message). */
export const MAX_LOGGED_ERROR_CHARS = 300;

/**
 * Per-process key of the model fingerprint. A plain hash of a short string can be reversed by trying
 * guesses (a provider prefix, then a patient's name); with a key nobody outside this process knows, it cannot. The price:
 * fingerprints compare only within one process (one worker), which is where grouping repeats matters.
 */
const FINGERPRINT_KEY = randomBytes(32);

/**
 * A model string the roster did not accept, as the log may hold it: its length and a keyed hash prefix,
 * enough to see the same wrong string repeat, never the string.
 */
export function modelFingerprint(model: string): string {
  const hmac = createHmac('sha256', FINGERPRINT_KEY).update(model).digest('hex').slice(0, 12);
  return `len=${model.length} hmac=${hmac}`;
}

/**
 * What an off-roster model string may look like to be logged as is: a routing string's plain characters (no
 * space, so no name or sentence) and at most 128 of them. Anything else is logged only as `modelFingerprint`.
 */
const ROUTING_LIKE = /^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,127}$/;

/** Whether a model string the roster did not accept can be logged in clear: callers of a removed model must stay visible. */
export function looksLikeRoutingString(model: string): boolean {
  return ROUTING_LIKE.test(model);
}

/**
 * Text of unknown origin cut to `maxChars`, with everything but printable ASCII shown as `?`: at most
 * 2 bytes per character once JSON-escaped (a quote or backslash), so at most 2 × maxChars + 3 bytes.
 */
export function boundedText(text: string, maxChars: number): string {
  const clean = text.slice(0, maxChars).replace(/[^\x20-\x7e]/g, '?');
  return text.length > maxChars ? `${clean}…` : clean;
}

/** An error as a log line may describe it: its class and the start of its message. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  return boundedText(`${String(error.name).slice(0, 64)}: ${String(error.message)}`, MAX_LOGGED_ERROR_CHARS);
}
