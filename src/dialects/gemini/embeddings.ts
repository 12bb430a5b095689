import type { NativeDialect, TranslatedResponse } from '../dialect.js';
import { embeddingsNoStream, embeddingsUsage } from '../embeddings.js';
import { isObject, parseJson } from '../json-values.js';
import { gatewayError } from '../../wire/gateway-error.js';

/** Google answers `400 … at most 100 requests can be in one batch` beyond this. */
export const MAX_GEMINI_BATCH = 100;

/**
 * POST /v1/embeddings to Gemini: one batchEmbedContents call ({base_url}/models/{model}:batchEmbedContents), one
 * request per input string in order, `dimensions` as outputDimensionality; the answer's `embeddings[i].values`
 * become OpenAI's `data[i].embedding`, as floats or, when the caller asked for base64, as the base64 of the
 * values as little-endian float32 (what the openai clients decode). More than one batch is refused, not split:
 * one request is one provider call, so failover, the breaker and the log stay as for every other request.
 */
export const geminiEmbeddings: NativeDialect = {
  buildRequest(call, upstreamModel) {
    const body = parseJson(call.text) as Record<string, unknown>; // the endpoint checked its shape
    const inputs = textInputs(body['input']);
    const model = `models/${upstreamModel}`;
    const dimensions = body['dimensions'];
    const requests = inputs.map((text) => ({ model, content: { parts: [{ text }] }, ...(dimensions !== undefined ? { outputDimensionality: dimensions } : {}) }));
    const base64 = body['encoding_format'] === 'base64';
    const count = inputs.length;
    return {
      path: `models/${encodeURIComponent(upstreamModel)}:batchEmbedContents`,
      body: JSON.stringify({ requests }),
      readResponse: (text, routingModel) => readBatch(text, routingModel, count, base64),
    };
  },

  readResponse: () => undefined, // every call carries its own reader (buildRequest)

  createStreamReader: embeddingsNoStream,
};

/** The input as strings; token ids have no Gemini form, and more than one batch is refused, before anything is sent. */
function textInputs(input: unknown): string[] {
  const inputs = typeof input === 'string' ? [input] : (input as unknown[]);
  if (inputs.some((item) => typeof item !== 'string')) {
    throw gatewayError('invalid_request', "Token ids cannot be sent to this model's provider (Gemini embeds text only): send 'input' as a string or an array of strings.", { param: 'input', code: 'invalid_value' });
  }
  if (inputs.length > MAX_GEMINI_BATCH) {
    throw gatewayError('invalid_request', `This model's provider (Gemini) embeds at most ${MAX_GEMINI_BATCH} inputs per request; this one has ${inputs.length}: send them in several requests.`, {
      param: 'input',
      code: 'too_many_inputs',
    });
  }
  return inputs as string[];
}

/** `{"embeddings":[{"values":[…]}, …]}` with one embedding per input, as OpenAI's list; undefined for any other shape. */
function readBatch(text: string, routingModel: string, count: number, base64: boolean): TranslatedResponse | undefined {
  const parsed = parseJson(text);
  const embeddings = isObject(parsed) ? parsed['embeddings'] : undefined;
  if (!Array.isArray(embeddings) || embeddings.length !== count) return undefined;
  const data: unknown[] = [];
  for (const [index, item] of embeddings.entries()) {
    const values = isObject(item) ? item['values'] : undefined;
    if (!Array.isArray(values) || !values.every((value) => typeof value === 'number')) return undefined;
    data.push({ object: 'embedding', index, embedding: base64 ? float32Base64(values as number[]) : values });
  }
  // Google reports no counts for batchEmbedContents today: the caller sees 0, the gateway charges its estimate.
  const metadata = isObject(parsed) && isObject(parsed['usageMetadata']) ? parsed['usageMetadata'] : undefined;
  const usage = metadata ? embeddingsUsage(metadata['promptTokenCount'], metadata['totalTokenCount']) : null;
  const shown = { prompt_tokens: usage?.prompt_tokens ?? 0, total_tokens: usage?.total_tokens ?? 0 };
  return { text: JSON.stringify({ object: 'list', data, model: routingModel, usage: shown }), usage, described: { id: null, model: null, finishReasons: [] } };
}

/** The values as little-endian float32, base64: what OpenAI sends for `encoding_format: "base64"`. */
function float32Base64(values: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(values.length * 4);
  for (let i = 0; i < values.length; i++) bytes.writeFloatLE(values[i]!, i * 4);
  return bytes.toString('base64');
}
