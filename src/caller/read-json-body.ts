import type { IncomingMessage, ServerResponse } from 'node:http';
import { BUDGET_BYTES_PER_VALUE, type BodyBudget, type BodyReservation } from './body-budget.js';
import { inviteBody } from './expect-continue.js';
import { gatewayError, type GatewayError } from '../wire/gateway-error.js';
import { JsonBoundsScanner, plainKeyAt, type JsonBounds, type JsonBoundsViolation } from '../wire/json-bounds.js';

/** A request body as the caller sent it, and the same body parsed. */
export interface JsonBody {
  readonly text: string;
  readonly value: unknown;
  /** The body's charge to the budget, given back when the response closes or, earlier, by whoever lets go of the body. */
  readonly reservation: BodyReservation;
}

/** What one request body may cost: its size, its shape, and its share of the memory all bodies hold. */
export interface BodyLimits {
  readonly maxBytes: number;
  readonly json: JsonBounds;
  readonly budget: BodyBudget;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Reads the whole body once, refusing early what cannot be a JSON body: a wrong content type (415),
 * a compressed body (415), more than `maxBytes` (413, before reading it when Content-Length says so),
 * deeper or with more values than the JSON bounds (400, as soon as the bytes read show it), and more than
 * the budget of bodies in flight has left (503, retryable). Everything the body holds is charged to the
 * budget until the response closes, or until its reservation is released earlier (a stream's commit). `100 Continue` is sent only once the headers have passed these checks.
 */
export async function readJsonBody(req: IncomingMessage, res: ServerResponse, limits: BodyLimits): Promise<JsonBody> {
  if (!isJsonContentType(req.headers['content-type'])) {
    throw gatewayError('unsupported_media_type', 'Content-Type must be application/json (with charset utf-8, if a charset is given).');
  }
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    throw gatewayError('unsupported_media_type', `Content-Encoding "${encoding.slice(0, 40)}" is not supported; send the body uncompressed.`);
  }
  const { maxBytes, budget } = limits;
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  if (declared > 0 && !budget.fits(declared)) throw overloaded();

  const reservation = budget.open();
  if (res.closed) throw gatewayError('caller_disconnected', 'The connection closed before the request body was complete.');
  res.on('close', () => reservation.release()); // 'close' comes once: no once() wrapper to keep for the response's life
  inviteBody(req, res);

  const scanner = new JsonBoundsScanner(limits.json);
  let size = 0;
  const chunks = await collect(req, (chunk, earlier) => {
    if (size + chunk.length > maxBytes) return tooLarge(maxBytes);
    size += chunk.length;
    if (!reservation.take(chunk.length)) return overloaded();
    const violation = scanner.feed(chunk);
    return violation && tooComplex(violation, limits.json, () => Buffer.concat([...earlier, chunk]));
  });
  // Parsing builds every value: charge them before it does.
  if (!reservation.take(scanner.values * BUDGET_BYTES_PER_VALUE)) throw overloaded();
  let text: string;
  try {
    text = utf8.decode(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  } catch {
    throw gatewayError('invalid_json', 'The request body is not valid UTF-8.');
  }
  try {
    return { text, value: JSON.parse(text) as unknown, reservation };
  } catch (error) {
    // V8's message quotes the body; only the position is kept, so no content is echoed or logged.
    const position = error instanceof SyntaxError ? /position (\d+)/.exec(error.message)?.[1] : undefined;
    throw gatewayError('invalid_json', `The request body is not valid JSON${position ? ` (at character ${position})` : ''}.`);
  }
}

/**
 * The body's chunks, each passed to `inspect` first (with the chunks before it). When `inspect` returns an
 * error, reading stops there: the stream is paused, not destroyed, so the socket lives on to carry the answer.
 */
function collect(req: IncomingMessage, inspect: (chunk: Buffer, earlier: readonly Buffer[]) => GatewayError | undefined): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const stop = () => req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onError);
    const onData = (chunk: Buffer) => {
      const refusal = inspect(chunk, chunks);
      if (refusal) {
        stop();
        req.pause();
        reject(refusal);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve(chunks);
    };
    const onError = () => {
      stop();
      reject(gatewayError('caller_disconnected', 'The connection closed before the request body was complete.'));
    };
    // 'close' before 'end' is a caller gone too, whether or not an error came with it.
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onError);
  });
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

function overloaded() {
  return gatewayError('overloaded', 'The gateway holds as many request bodies as its memory allows (MAX_BODY_BYTES_IN_FLIGHT); send the request again.', {
    headers: { 'retry-after': '1' },
  });
}

function tooComplex(violation: JsonBoundsViolation, bounds: JsonBounds, bytesSoFar: () => Buffer): GatewayError {
  const param = violation.keySpan && plainKeyAt(bytesSoFar(), violation.keySpan.start, violation.keySpan.end);
  const where = param ? ` (in '${param}')` : '';
  const message =
    violation.bound === 'depth'
      ? `The request body nests arrays and objects more than ${bounds.maxDepth} levels deep${where} (MAX_JSON_DEPTH).`
      : `The request body has more than ${bounds.maxValues} JSON values${where} (MAX_JSON_VALUES); each object, array, string, number, true, false and null counts one.`;
  return gatewayError('request_too_complex', message, { param: param ?? null });
}
