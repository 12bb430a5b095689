import { isObject, parseJson } from './json-values.js';

/**
 * An SSE event of a stream whose data names its own type (Anthropic's Messages, OpenAI's Responses): the data
 * as an object ({} when it is not one) and its type, the data's `type` else the `event:` line's.
 */
export function typedEvent(message: { readonly data: string; readonly event: string | undefined }): { data: Record<string, unknown>; type: string | undefined } {
  const parsed = parseJson(message.data);
  const data = isObject(parsed) ? parsed : {};
  return { data, type: typeof data['type'] === 'string' ? data['type'] : message.event };
}
