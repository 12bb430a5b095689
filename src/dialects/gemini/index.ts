import type { Dialect } from '../dialect.js';
import { sseStreamReader } from '../sse-stream-reader.js';
import { readGeminiError } from './errors.js';
import { geminiEmbeddings } from './embeddings.js';
import { buildGeminiRequest } from './request/index.js';
import { readGeminiResponse } from './response.js';
import { createGeminiStreamTranslator } from './stream.js';

/**
 * Google's native generateContent, on the Gemini API ({base_url} = …/v1beta) or Vertex AI ({base_url} =
 * …/publishers/google). The model is in the path, and a stream is another method of it
 * (`:streamGenerateContent?alt=sse`, SSE whose end is the end of the body). Usage always comes with
 * Gemini's answers, so `requestStreamUsage` changes nothing here.
 */
export const geminiDialect: Dialect = {
  buildRequest(call) {
    const method = call.body.stream === true ? 'streamGenerateContent?alt=sse' : 'generateContent';
    return { path: `models/${encodeURIComponent(call.upstreamModel)}:${method}`, body: buildGeminiRequest(call) };
  },
  readResponse: readGeminiResponse,
  readError: readGeminiError,
  createStreamReader(context) {
    return sseStreamReader(createGeminiStreamTranslator(context), context.maxEventChars);
  },
  // POST /v1/embeddings: batchEmbedContents (embeddings.ts).
  native: (format) => (format === 'openai-embeddings' ? geminiEmbeddings : undefined),
};
