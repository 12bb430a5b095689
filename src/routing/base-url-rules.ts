/**
 * What a provider base URL must be, in one place: the routes compiler applies it to `base_url` (scripts/ imports
 * this file) and the gateway to a `base_url_env` override at start-up, so the two cannot accept different URLs.
 */

/** The pattern of `base_url` in schemas/routes.schema.json (a test keeps the two equal). */
export const BASE_URL_PATTERN = /^https?:\/\/[^\s]+$/;

/** The problem with `text` as a provider base URL, as words that follow its name; null when it is fine. */
export function baseUrlProblem(text: string): string | null {
  if (!BASE_URL_PATTERN.test(text)) return 'is not an http:// or https:// URL';
  const port = portOf(text);
  // A port outside 1..65535 (URL refuses above, accepts 0) would otherwise read as "not a URL" or fail per request.
  if (port !== null && /^\d+$/.test(port) && (Number(port) < 1 || Number(port) > 65_535)) {
    return `port ${port.length > 10 ? `${port.slice(0, 10)}…` : port} is out of range (1 to 65535)`;
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute http:// or https:// URL';
  }
  // A bare "?" or "#" leaves URL's search and hash empty, yet would still end up in every request's path.
  if (url.username || url.password || /[?#]/.test(text)) return 'must not carry credentials, a query or a fragment (use api_key_env and headers)';
  return null;
}

/** The port as written in the authority, or null when none is written. */
function portOf(text: string): string | null {
  const authority = /^https?:\/\/([^/?#\\]*)/.exec(text)?.[1] ?? '';
  const hostAndPort = authority.slice(authority.lastIndexOf('@') + 1);
  const match = hostAndPort.startsWith('[') ? /^\[[^\]]*\]:(.*)$/.exec(hostAndPort) : /^[^:]*:(.*)$/.exec(hostAndPort);
  return match ? match[1]! : null;
}
