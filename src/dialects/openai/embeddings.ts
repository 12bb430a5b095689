import { setTopLevelString } from '../../wire/json-top-level-edit.js';
import type { NativeDialect } from '../dialect.js';
import { embeddingsNoStream, embeddingsUsage } from '../embeddings.js';
import { isObject, parseJson } from '../json-values.js';

/**
 * POST /v1/embeddings to an OpenAI-compatible provider ({base_url}/embeddings): the caller's bytes byte for byte
 * but `model`, rewritten in place to the upstream model (so `encoding_format`, `dimensions`, `user` and unknown
 * fields go as sent), and the provider's answer as it came but its `model`, set to the routing string.
 */
export const openaiEmbeddings: NativeDialect = {
  buildRequest(call, upstreamModel) {
    const body = setTopLevelString(call.text, 'model', upstreamModel);
    if (body === undefined) throw new Error('request body is not a JSON object'); // the endpoint parsed it as one
    return { path: 'embeddings', body };
  },

  readResponse(text, routingModel) {
    const parsed = parseJson(text);
    const withModel = isObject(parsed) && Array.isArray(parsed['data']) ? setTopLevelString(text, 'model', routingModel) : undefined;
    if (withModel === undefined || !isObject(parsed)) return undefined;
    const usage = isObject(parsed['usage']) ? embeddingsUsage(parsed['usage']['prompt_tokens'], parsed['usage']['total_tokens']) : null;
    return { text: withModel, usage, described: { id: null, model: parsed['model'], finishReasons: [] } };
  },

  createStreamReader: embeddingsNoStream,
};
