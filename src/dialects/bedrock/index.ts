import type { Dialect, StreamReader, StreamReaderContext } from '../dialect.js';
import { gatewayError } from '../../wire/gateway-error.js';
import { readBedrockError } from './errors.js';
import { EventStreamDecoder } from './event-stream.js';
import { buildBedrockRequest } from './request/index.js';
import { readBedrockResponse } from './response.js';
import { createBedrockStreamTranslator } from './stream.js';

/**
 * Amazon Bedrock's Converse API ({base_url} = https://bedrock-runtime.{region}.amazonaws.com by default): the
 * model id (or inference profile, or ARN) is one path segment, percent-encoded (`:` → %3A, `/` → %2F); a
 * stream is ConverseStream, whose answer is binary AWS event-stream messages, not SSE. The request is signed
 * by the engine (auth: aws) or carries a Bedrock API key (auth: bearer).
 */
export const bedrockDialect: Dialect = {
  buildRequest(call) {
    const method = call.body.stream === true ? 'converse-stream' : 'converse';
    return { path: `model/${encodeURIComponent(call.upstreamModel)}/${method}`, body: buildBedrockRequest(call) };
  },
  readResponse: readBedrockResponse,
  readError: readBedrockError,
  streamContentType: 'application/vnd.amazon.eventstream',
  createStreamReader: eventStreamReader,
};

/** The framing (event-stream messages, none larger than MAX_UPSTREAM_BODY_BYTES) and the translation of one stream. */
function eventStreamReader(context: StreamReaderContext): StreamReader {
  const decoder = new EventStreamDecoder(context.maxEventChars, context.providerId);
  const translator = createBedrockStreamTranslator(context);
  return {
    describe: () => translator.describe(),
    push: (chunk) => decoder.push(chunk),
    next() {
      const message = decoder.next();
      return message === undefined ? undefined : translator.translate(message);
    },
    end() {
      if (decoder.partial) {
        throw gatewayError('invalid_upstream_response', `The provider "${context.providerId}" ended its event stream inside a message.`, { provider: context.providerId });
      }
      return translator.end();
    },
  };
}
