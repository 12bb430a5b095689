/**
 * The Via header (RFC 9110 §7.6.3): what a request arrived with, and what the gateway sends upstream. Only
 * well-formed entries travel on, without their comments (free text a caller chose); the gateway's own entry is
 * appended, so a loop through other proxies or gateways comes back carrying it.
 */

/** RFC 9110 token characters. */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** `[ protocol-name "/" ] protocol-version` then `received-by` (a pseudonym, or host[:port], also [IPv6]:port). */
const ENTRY = new RegExp(`^(${TOKEN}(?:/${TOKEN})?)\\s+(${TOKEN}(?::\\d{1,5})?|\\[[0-9A-Fa-f:.]+\\](?::\\d{1,5})?)(?:\\s+\\(.*\\))?$`);

/** A gateway id: a pseudonym that is a token (RFC 9110 allows host[:port] too; the gateway's own is kept simpler). */
export const GATEWAY_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** One hop a request passed through: the protocol it came by and who received it. */
export interface ViaEntry {
  readonly protocol: string;
  readonly receivedBy: string;
}

/**
 * The entries of a received Via (Node joins repeated Via fields with ", "). Commas inside a comment do not
 * split; an entry that is not `protocol received-by [comment]` is dropped, as is everything after an unclosed comment.
 */
export function parseVia(header: string): ViaEntry[] {
  const entries: ViaEntry[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= header.length; i++) {
    const char = header[i];
    if (char === '(') depth++;
    else if (char === ')' && depth > 0) depth--;
    else if (char === '\\' && depth > 0) i++;
    else if ((char === ',' && depth === 0) || i === header.length) {
      if (depth > 0) break;
      const match = ENTRY.exec(header.slice(start, i).trim());
      if (match) entries.push({ protocol: match[1]!, receivedBy: match[2]! });
      start = i + 1;
    }
  }
  return entries;
}

/** The Via to send upstream: the received entries as they were (comments dropped), then this gateway's. */
export function formatVia(received: readonly ViaEntry[], own: string): string {
  let value = '';
  for (const entry of received) value += `${entry.protocol} ${entry.receivedBy}, `;
  return `${value}${own}`;
}

/** The gateway's own entry: it receives HTTP/1.1 (the server is node:http). */
export function ownViaEntry(gatewayId: string): string {
  return `1.1 ${gatewayId}`;
}
