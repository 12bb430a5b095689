import { gatewayError, type GatewayError } from '../wire/gateway-error.js';
import { isObject, shown } from './inbound-fields.js';

/** OpenAI takes at most this many inputs in one embeddings request; so does the gateway, on every provider. */
export const MAX_EMBEDDING_INPUTS = 2048;
const ENCODINGS = new Set(['float', 'base64']);

/**
 * What an embeddings request must be on every route, before anything is sent (docs/embeddings.md): a string
 * `model`, and `input` in one of OpenAI's four forms (a string; strings; token ids; arrays of token ids), none
 * empty, at most MAX_EMBEDDING_INPUTS of them; `encoding_format`, `dimensions` and `user` as OpenAI types them.
 * Other fields pass to a provider that takes the body as it is (openai) and are dropped by one that does not.
 */
export function checkEmbeddingsRequest(body: unknown): { model: string } {
  if (!isObject(body)) throw invalid(null, 'The request body must be a JSON object.', 'invalid_type');
  if (body['model'] === undefined) throw invalid('model', "Missing required parameter: 'model'.", 'missing_required_parameter');
  if (typeof body['model'] !== 'string') throw invalid('model', `Invalid type for 'model': expected a string, but got ${shown(body['model'])}.`, 'invalid_type');
  checkInput(body['input']);
  const encoding = body['encoding_format'];
  if (encoding !== undefined && !ENCODINGS.has(encoding as string)) {
    throw invalid('encoding_format', `Invalid 'encoding_format': expected "float" or "base64", but got ${shown(encoding)}.`, 'invalid_value');
  }
  const dimensions = body['dimensions'];
  if (dimensions !== undefined && !(Number.isSafeInteger(dimensions) && (dimensions as number) > 0)) {
    throw invalid('dimensions', `Invalid 'dimensions': expected a positive integer, but got ${shown(dimensions)}.`, 'invalid_value');
  }
  if (body['user'] !== undefined && typeof body['user'] !== 'string') throw invalid('user', `Invalid type for 'user': expected a string, but got ${shown(body['user'])}.`, 'invalid_type');
  return { model: body['model'] };
}

function checkInput(input: unknown): void {
  if (input === undefined) throw invalid('input', "Missing required parameter: 'input'.", 'missing_required_parameter');
  if (typeof input === 'string') {
    if (input === '') throw invalid('input', "Invalid 'input': the string is empty; send text to embed.", 'invalid_value');
    return;
  }
  if (!Array.isArray(input)) throw invalid('input', `Invalid 'input': expected a string, an array of strings, an array of token ids or an array of token-id arrays, but got ${shown(input)}.`, 'invalid_type');
  if (input.length === 0) throw invalid('input', "Invalid 'input': the array is empty; send at least one input.", 'empty_array');
  if (input.length > MAX_EMBEDDING_INPUTS) throw invalid('input', `Invalid 'input': at most ${MAX_EMBEDDING_INPUTS} inputs per request; this one has ${input.length}.`, 'array_above_max_length');
  // One form for the whole array, decided by its first item: strings, token ids, or arrays of token ids.
  const first = input[0];
  const form = typeof first === 'string' ? 'strings' : isTokenId(first) ? 'tokens' : Array.isArray(first) ? 'token arrays' : undefined;
  input.forEach((item: unknown, index) => {
    const ok = form === 'strings' ? typeof item === 'string' && item !== '' : form === 'tokens' ? isTokenId(item) : form === 'token arrays' && isTokenArray(item);
    if (!ok) {
      const expected = form === undefined ? 'a string, a token id or an array of token ids' : form === 'strings' ? 'a non-empty string, as the first input' : form === 'tokens' ? 'a token id (a non-negative integer), as the first input' : 'a non-empty array of token ids, as the first input';
      throw invalid(`input[${index}]`, `Invalid 'input[${index}]': expected ${expected}, but got ${shown(item)}.`, 'invalid_value');
    }
  });
}

function isTokenId(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function isTokenArray(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0 && value.every(isTokenId);
}

function invalid(param: string | null, message: string, code: string): GatewayError {
  return gatewayError('invalid_request', message, { param, code });
}
