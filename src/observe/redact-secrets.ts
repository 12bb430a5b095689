import { GatewayError } from '../wire/gateway-error.js';

/** What a configured secret is replaced with: no quote or backslash, so a JSON string stays valid. */
export const REDACTED = '[redacted]';

/**
 * Shorter values are placeholders that local servers ignore (`EMPTY`, `ollama`): redacting such common
 * words would corrupt answers. Every hosted provider's key is at least 32 characters.
 */
export const MIN_REDACTED_SECRET_CHARS = 16;

/** Returns `text` with every occurrence of the secrets it knows replaced; the same string when there is none. */
export type Redact = (text: string) => string;

export const redactNothing: Redact = (text) => text;

/**
 * A redactor for the given secrets, in the forms a provider may quote them: verbatim, as escaped inside
 * a JSON string, and with `/` escaped as `\/` (PHP's encoder). The check costs one indexOf per form and
 * allocates nothing when no secret is there, so it runs on every stream event.
 */
export function secretRedactor(secrets: Iterable<string>): Redact {
  const needles = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_REDACTED_SECRET_CHARS) continue;
    const inJson = JSON.stringify(secret).slice(1, -1);
    needles.add(secret).add(inJson).add(inJson.replaceAll('/', '\\/'));
  }
  const list = [...needles];
  if (list.length === 0) return redactNothing;
  return (text) => {
    for (const needle of list) if (text.includes(needle)) return replaceAll(text, list);
    return text;
  };
}

function replaceAll(text: string, needles: readonly string[]): string {
  let out = text;
  for (const needle of needles) {
    let result = '';
    let from = 0;
    for (let at = out.indexOf(needle); at >= 0; at = out.indexOf(needle, from)) {
      result += out.slice(from, Math.max(from, escapeStart(out, at))) + REDACTED;
      from = at + needle.length;
    }
    out = result + out.slice(from);
  }
  return out;
}

/**
 * Where the JSON escape that `at` falls inside begins (`\n`, `\u00e9`), else `at`: cutting an escape in two
 * would leave a lone backslash and break the caller's JSON, so the redaction takes the whole escape.
 */
function escapeStart(text: string, at: number): number {
  for (let j = at - 1; j >= 0 && j >= at - 5; j--) {
    if (text[j] !== '\\') continue;
    let run = 1;
    while (j - run >= 0 && text[j - run] === '\\') run++;
    // An even run is pairs of escaped backslashes, all ended before `at`.
    if (run % 2 === 0) return at;
    return j + (text[j + 1] === 'u' ? 6 : 2) > at ? j : at;
  }
  return at;
}

/** The envelope with every secret taken out of its text, and any header that quoted one dropped. */
export function redactGatewayError(error: GatewayError, redact: Redact): GatewayError {
  const body = { ...error.body };
  let changed = false;
  for (const [field, value] of Object.entries(body) as [keyof typeof body, unknown][]) {
    if (typeof value !== 'string') continue;
    const clean = redact(value);
    if (clean === value) continue;
    (body as Record<string, unknown>)[field] = clean;
    changed = true;
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(error.headers)) {
    if (redact(value) === value) headers[name] = value;
    else changed = true;
  }
  return changed ? new GatewayError(error.status, error.retry, body, headers) : error;
}
