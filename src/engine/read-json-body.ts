import type { IncomingMessage } from 'node:http';
import { gatewayError } from './gateway-error.js';
import { readLimited } from './read-limited.js';

/** A request body as the caller sent it, and the same body parsed. */
export interface JsonBody {
  readonly text: string;
  readonly value: unknown;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Reads the whole body once, refusing early what cannot be a JSON body: a wrong content type (415),
 * a compressed body (415), more than `maxBytes` (413, before reading it when Content-Length says so).
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<JsonBody> {
  if (!isJsonContentType(req.headers['content-type'])) {
    throw gatewayError('unsupported_media_type', 'Content-Type must be application/json (with charset utf-8, if a charset is given).');
  }
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    throw gatewayError('unsupported_media_type', `Content-Encoding "${encoding.slice(0, 40)}" is not supported; send the body uncompressed.`);
  }
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) throw tooLarge(maxBytes);

  let read: { bytes: Buffer; truncated: boolean };
  try {
    read = await readLimited(req, maxBytes);
  } catch {
    throw gatewayError('caller_disconnected', 'The connection closed before the request body was complete.');
  }
  const { bytes, truncated } = read;
  if (truncated) throw tooLarge(maxBytes);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw gatewayError('invalid_json', 'The request body is not valid UTF-8.');
  }
  try {
    return { text, value: JSON.parse(text) as unknown };
  } catch (error) {
    // V8's message quotes the body; only the position is kept, so no content is echoed or logged.
    const position = error instanceof SyntaxError ? /position (\d+)/.exec(error.message)?.[1] : undefined;
    throw gatewayError('invalid_json', `The request body is not valid JSON${position ? ` (at character ${position})` : ''}.`);
  }
}

function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const [mediaType = '', ...parameters] = header.toLowerCase().split(';').map((part) => part.trim());
  if (mediaType !== 'application/json') return false;
  return parameters.every((parameter) => !parameter.startsWith('charset=') || /^charset="?utf-8"?$/.test(parameter));
}

function tooLarge(maxBytes: number) {
  return gatewayError('request_too_large', `The request body is larger than ${maxBytes} bytes (MAX_BODY_BYTES).`);
}
