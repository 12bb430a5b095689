import type { ErrorBody } from '../../generated/types/error-envelope.js';
import type { AnswerWriter, StreamFrames } from '../../routing/answer-writer.js';
import { parsed, writeJson } from '../chat-answer.js';
import { invalidField, isObject, shown, stringField, unsupportedField } from '../inbound-fields.js';
import { failedError, itemId } from './response-object.js';
import { refuseStateful } from './request.js';

const SEQUENCE_KEY = '"sequence_number":';
const CREATED = 'event: response.created\n';

/**
 * What a Responses request must satisfy on every route, native ones included, before anything is sent: a
 * model, a boolean stream, nothing stored or run in the background, no built-in tool (docs/responses.md).
 */
export function readNativeResponses(body: Record<string, unknown>): { model: string; stream: boolean } {
  refuseStateful(body);
  const model = stringField(body['model'], 'model');
  // Whether the answer streams is the gateway's to know as the provider will: nothing but a boolean.
  if (body['stream'] !== undefined && body['stream'] !== null && typeof body['stream'] !== 'boolean') throw invalidField('stream', `Invalid 'stream': expected a boolean.`);
  return { model, stream: body['stream'] === true };
}

/** The provider's own Responses answers, passed as they came (the dialect set `model`). */
export function nativeResponsesWriter(routingModel: string): AnswerWriter {
  return { whole: writeJson, stream: () => nativeResponsesStream(routingModel) };
}

/**
 * The provider's events pass as they are. A failure the gateway sees after the first event (a cut, silence, a
 * stream over its limits) ends it with response.failed carrying the envelope's fields, numbered after the last
 * event the provider numbered, for the response the provider announced in response.created.
 */
function nativeResponsesStream(routingModel: string): StreamFrames {
  let sequence = -1;
  let id: unknown = null;
  let createdAt: unknown = null;
  let finished = false;
  return {
    frames(text) {
      if (id === null && text.startsWith(CREATED)) ({ id, createdAt } = announced(text));
      const at = text.lastIndexOf(SEQUENCE_KEY);
      if (at >= 0) {
        const number = Number(/^\s*(\d{1,15})/.exec(text.slice(at + SEQUENCE_KEY.length, at + SEQUENCE_KEY.length + 24))?.[1]);
        if (Number.isSafeInteger(number) && number > sequence) sequence = number;
      }
      return text;
    },
    error(body: ErrorBody) {
      if (finished) return '';
      finished = true;
      sequence++;
      const response = { id: id ?? itemId('resp'), object: 'response', created_at: createdAt, status: 'failed', model: routingModel, output: [], error: failedError(body), incomplete_details: null, usage: null, store: false };
      return `event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', sequence_number: sequence, response })}\n\n`;
    },
  };
}

/** The id and creation time of the response a response.created event (the first of the frames) announced. */
function announced(text: string): { id: unknown; createdAt: unknown } {
  const line = text.slice(CREATED.length, text.indexOf('\n\n') < 0 ? undefined : text.indexOf('\n\n'));
  const data = parsed(line.startsWith('data: ') ? line.slice(6) : line);
  const response = isObject(data) && isObject(data['response']) ? data['response'] : {};
  return { id: typeof response['id'] === 'string' ? response['id'] : null, createdAt: typeof response['created_at'] === 'number' ? response['created_at'] : null };
}
