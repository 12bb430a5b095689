import type { Usage } from '../../generated/types/usage.js';
import { scanTopLevel, type TopLevelScan } from '../../wire/json-top-level.js';
import { editTopLevel, setTopLevelString } from '../../wire/json-top-level-edit.js';
import type { AnswerDescription, NativeDialect, NativeFormat, NativeRoute, StreamStep, StreamTranslator } from '../dialect.js';
import { isObject, parseJson } from '../json-values.js';
import { sseStreamReader } from '../sse-stream-reader.js';
import { typedEvent } from '../typed-event.js';
import { refuseGatedTools } from '../gated.js';
import { refuseGatedFields } from './gated-fields.js';

const CONTINUE: StreamStep = { frames: '' };
/** Events that end a Responses stream with the whole answer. */
const COMPLETE = new Set(['response.completed', 'response.incomplete']);

/**
 * OpenAI's own Responses API taken natively (POST /v1/responses inbound, to a model routes.yaml marks
 * `api: responses`): the caller's bytes go to {base_url}/responses with only `model` set to the upstream model
 * and `store` set to false (the gateway keeps nothing, so nothing may be kept on its behalf); the provider's
 * answer and every event come back with only the response's `model` set to the routing string.
 */
export function openaiNative(format: NativeFormat, route: NativeRoute): NativeDialect | undefined {
  if (format !== 'openai-responses' || route.api !== 'responses') return undefined;
  const allowedFields = route.allowFields ?? [];
  return {
    ...RESPONSES_NATIVE,
    buildRequest(call, upstreamModel) {
      const scan = scanTopLevel(call.text);
      if (!scan) throw new Error('request body is not a JSON object'); // the endpoint parsed it as one
      // What lets a caller spend more passes only where routes.yaml allows it, as on /v1/chat/completions.
      refuseGatedFields(call.text, scan, allowedFields);
      if (!allowedFields.includes('built_in_tools')) refuseBuiltInTools(call.text, scan);
      const edits = new Map([['model', JSON.stringify(upstreamModel)], ['store', 'false']]);
      return { path: 'responses', body: editTopLevel(call.text, scan, edits), headers: call.headers };
    },
  };
}

/** Tools the caller runs itself; every other type is a built-in tool that runs (and bills) at the provider. */
const CALLER_TOOLS = new Set(['function', 'custom']);
const isBuiltInTool = (type: unknown) => !CALLER_TOOLS.has(type as string);

/**
 * Refuses, naming it, a built-in tool: what a caller may run on the gateway's account is routes.yaml's to allow.
 * Only `tools` is parsed, each copy of a duplicated key, whichever one the provider keeps.
 */
function refuseBuiltInTools(text: string, scan: TopLevelScan): void {
  scan.keys.forEach((key, k) => {
    if (key !== 'tools') return;
    refuseGatedTools(parseJson(text.slice(scan.values[k]!.start, scan.values[k]!.end)), isBuiltInTool, (param, type) => {
      const shown = typeof type === 'string' ? JSON.stringify(type.slice(0, 64)) : String(type);
      return `'${param}' ${shown} is not allowed for this model: built-in tools run and bill at the provider, so routes.yaml must allow them (allow_fields: [built_in_tools] on the model or its provider); send function tools.`;
    });
  });
}

/** How the provider's answer and events come back; buildRequest is the route's (openaiNative). */
const RESPONSES_NATIVE: Omit<NativeDialect, 'buildRequest'> = {
  readResponse(text, routingModel) {
    const parsed = parseJson(text);
    if (!isObject(parsed) || !Array.isArray(parsed['output'])) return undefined;
    const withModel = setTopLevelString(text, 'model', routingModel);
    if (withModel === undefined) return undefined;
    const described = { id: parsed['id'], model: parsed['model'], finishReasons: finishReasonsOf(parsed) };
    return { text: withModel, usage: chatUsageOf(parsed['usage']), described };
  },
  createStreamReader(context) {
    return sseStreamReader(responsesStreamTranslator(context.routingModel), context.maxEventChars);
  },
};

/**
 * Each event as the provider framed it (re-framed on one data line, its `event:` line its type), the response
 * object's `model` set to the routing string wherever one is carried. response.completed and
 * response.incomplete end the answer; response.failed and `error` end it as the provider's error, which before
 * the first event reaches the caller is a failure the engine may fail over from. Nothing is held but the usage.
 */
function responsesStreamTranslator(routingModel: string): StreamTranslator {
  let ended = false;
  // The span's description (docs/observability.md): response.created's id and model, the terminal event's finish reason.
  let described: AnswerDescription = { id: null, model: null, finishReasons: [] };
  return {
    describe: () => described,
    translate(message) {
      if (ended) return CONTINUE;
      if (message.kind === 'comment') return { frames: `: ${message.text}\n\n` };
      const event = typedEvent(message);
      const { data } = event;
      const type = event.type ?? 'message';
      const response = isObject(data['response']) ? data['response'] : undefined;
      const text = response ? withResponseModel(message.data, routingModel) : message.data;
      const frames = `event: ${type.replaceAll(/[\r\n]/g, '')}\ndata: ${text.replaceAll(/\r\n|\r|\n/g, '')}\n\n`;
      const usage = response ? chatUsageOf(response['usage']) : null;
      const step: { frames: string; usage?: Usage } = usage ? { frames, usage } : { frames };
      if (response && type === 'response.created') described = { id: response['id'], model: response['model'], finishReasons: [] };
      if (response && (COMPLETE.has(type) || type === 'response.failed')) described = { ...described, finishReasons: finishReasonsOf(response) };
      if (COMPLETE.has(type)) {
        ended = true;
        return { ...step, end: 'done' };
      }
      if (type === 'response.failed' || type === 'error') {
        ended = true;
        const error = type === 'error' ? data : isObject(response?.['error']) ? response['error'] : {};
        const details = { message: stringOrNull(error['message']), code: stringOrNull(error['code']) };
        return { ...step, end: 'error', failure: { status: statusOf(details.code), details } };
      }
      return step;
    },
  };
}

/**
 * Why a response stopped, as the provider said it, for the span's finish reasons: its status (completed, failed),
 * or for an incomplete one the reason it gives (max_output_tokens, content_filter), which says more.
 */
function finishReasonsOf(response: Record<string, unknown>): unknown[] {
  const details = isObject(response['incomplete_details']) ? response['incomplete_details'] : {};
  return [response['status'] === 'incomplete' && typeof details['reason'] === 'string' ? details['reason'] : response['status']];
}

/** The status an in-stream error stands for, by OpenAI's codes; 500 when it says nothing more. */
function statusOf(code: string | null): number {
  if (code === 'rate_limit_exceeded') return 429;
  if (code === 'server_is_overloaded' || code === 'slow_down') return 503;
  return 500;
}

/** An event's data with `response.model` replaced in place; everything else as the provider wrote it. */
function withResponseModel(text: string, routingModel: string): string {
  const scan = scanTopLevel(text);
  if (!scan) return text;
  const setModel = (current: string | undefined) => (current === undefined ? undefined : (setTopLevelString(current, 'model', routingModel) ?? current));
  return editTopLevel(text, scan, new Map([['response', setModel]]));
}

/**
 * The Responses' usage in the chat form's names, which the log line, metrics and callers' budgets read; null
 * without one. Counts are taken as given: the accounting refuses what is not a count (docs/observability.md).
 */
export function chatUsageOf(usage: unknown): Usage | null {
  if (!isObject(usage)) return null;
  const input = isObject(usage['input_tokens_details']) ? usage['input_tokens_details'] : {};
  const output = isObject(usage['output_tokens_details']) ? usage['output_tokens_details'] : {};
  const chat: Record<string, unknown> = { prompt_tokens: usage['input_tokens'], completion_tokens: usage['output_tokens'], total_tokens: usage['total_tokens'] };
  if (input['cached_tokens'] !== undefined) chat['prompt_tokens_details'] = { cached_tokens: input['cached_tokens'] };
  if (output['reasoning_tokens'] !== undefined) chat['completion_tokens_details'] = { reasoning_tokens: output['reasoning_tokens'] };
  return chat as Usage;
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value.slice(0, 512) : null;
}
