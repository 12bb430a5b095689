import type { RequestHandler } from 'express';
import type { AnswerWriter } from '../../routing/answer-writer.js';
import { gatewayError } from '../../wire/gateway-error.js';
import { chatCompletionsHandler, type ChatCompletionsOptions, type InboundFormat } from '../chat-completions.js';
import { parsed, writeJson } from '../chat-answer.js';
import { isObject, invalidField } from '../inbound-fields.js';
import { nativeResponsesWriter, readNativeResponses } from './native.js';
import { readResponsesRequest, type ResponsesRequest } from './request.js';
import { responseHead, responseOfCompletion, type ResponseHead } from './response-object.js';
import { responsesStream } from './stream.js';

/**
 * POST /v1/responses, stateless: natively to models marked `api: responses`, else the request translated to the
 * internal chat form and the answer back to a response object or event stream.
 */
export function responsesHandler(options: Omit<ChatCompletionsOptions, 'inbound'>) {
  return chatCompletionsHandler({ ...options, inbound: responsesFormat(options.maxUpstreamBodyBytes) });
}

function responsesFormat(maxAnswerChars: number): InboundFormat {
  return {
    read({ text, value }) {
      if (!isObject(value)) throw invalidField('', 'The request body must be a JSON object.');
      const { model, stream } = readNativeResponses(value);
      // To a model routes.yaml marks `api: responses`, the caller's bytes go natively (docs/responses.md).
      const native = { call: { format: 'openai-responses', text, headers: {} } as const, writer: nativeResponsesWriter(model) };
      // The chat form is built now; a field it cannot carry is refused only when a route without native Responses comes to serve it.
      let request: ResponsesRequest;
      try {
        request = readResponsesRequest(value);
      } catch (error) {
        const placeholder = { model, messages: [{ role: 'user', content: '' }], ...(stream ? { stream: true } : {}) };
        return { text: JSON.stringify(placeholder), value: placeholder, answer: { native, chat: { refusal: error as Error } } };
      }
      const head = responseHead(model, request);
      const answer = { native, chat: responsesWriter(head, maxAnswerChars), keeps: head.echoChars, paths: request.paths };
      return { text: JSON.stringify(request.chat), value: request.chat, answer };
    },
  };
}

function responsesWriter(head: ResponseHead, maxAnswerChars: number): AnswerWriter {
  return {
    whole(res, status, text) {
      const response = responseOfCompletion(head, parsed(text));
      if (!response) throw gatewayError('invalid_upstream_response', 'The provider answered with a body that is not a chat completion.');
      writeJson(res, status, JSON.stringify(response));
    },
    stream: (holdings) => responsesStream(head, maxAnswerChars, holdings),
  };
}

/** GET or DELETE /v1/responses/{id}: nothing is stored, so there is nothing to find. */
export const responsesNotStored: RequestHandler = (_req, _res, next) => {
  next(gatewayError('not_found', 'This gateway is stateless and stores no responses: there is nothing to retrieve or delete (docs/responses.md).'));
};
