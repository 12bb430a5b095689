import { scanTopLevel } from '../../wire/json-top-level.js';
import { editTopLevel, setTopLevelString } from '../../wire/json-top-level-edit.js';
import type { AnswerDescription, NativeDialect, NativeFormat, NativeRoute, StreamStep, StreamTranslator } from '../dialect.js';
import { refuseGatedFields, refuseServerTools } from './request/gated-fields.js';
import { sseStreamReader } from '../sse-stream-reader.js';
import { isObject, parseJson } from './json-values.js';
import { mergeCounts, openAIUsage, type AnthropicCounts } from './usage.js';
import { anthropicStreamFailure } from './stream.js';
import { typedEvent } from '../typed-event.js';

const CONTINUE: StreamStep = { frames: '' };

/**
 * Anthropic's own Messages API taken natively (POST /v1/messages and /v1/messages/count_tokens inbound): the
 * caller's bytes go on with only `model` set to the upstream model (cache_control, thinking signatures, betas
 * as sent), and the provider's answer comes back with only `model` set to the routing string.
 */
export function anthropicNative(format: NativeFormat, route: NativeRoute): NativeDialect | undefined {
  if (format !== 'anthropic-messages' && format !== 'anthropic-count-tokens') return undefined; // another API's format
  const path = format === 'anthropic-messages' ? 'messages' : 'messages/count_tokens';
  return {
    buildRequest(call, upstreamModel) {
      // What lets a caller spend or reach more passes only where routes.yaml allows it; counting tokens spends nothing.
      if (format === 'anthropic-messages') refuseGated(call.text, route);
      const body = setTopLevelString(call.text, 'model', upstreamModel);
      if (body === undefined) throw new Error('request body is not a JSON object'); // the endpoint parsed it as one
      return { path, body, headers: call.headers };
    },
    readResponse(text, routingModel) {
      const parsed = parseJson(text);
      if (!isObject(parsed)) return undefined;
      if (format === 'anthropic-count-tokens') return typeof parsed['input_tokens'] === 'number' ? { text, usage: null } : undefined;
      if (!Array.isArray(parsed['content'])) return undefined;
      const withModel = setTopLevelString(text, 'model', routingModel);
      if (withModel === undefined) return undefined;
      const counts = mergeCounts(undefined, parsed['usage']);
      const described = { id: parsed['id'], model: parsed['model'], finishReasons: [parsed['stop_reason']] };
      return { text: withModel, usage: counts ? openAIUsage(counts).accounting : null, described };
    },
    createStreamReader(context) {
      return sseStreamReader(nativeStreamTranslator(context.routingModel), context.maxEventChars);
    },
  };
}

/** The gated fields and server tools of a native Messages body, refused unless the route's allow_fields lists them. */
function refuseGated(text: string, route: NativeRoute): void {
  const body = parseJson(text);
  if (!isObject(body)) return;
  const allowedFields = route.allowFields ?? [];
  const given = (key: string) => (Object.hasOwn(body, key) && body[key] !== null ? { value: body[key] } : undefined);
  // A model's reasoning unknown here is treated as none, so `thinking` then needs allow_fields.
  const reasoning = route.reasoning === 'budget' || route.reasoning === 'adaptive' ? route.reasoning : 'none';
  refuseGatedFields({ given }, { reasoning, allowedFields });
  refuseServerTools(body['tools'], allowedFields);
}

/**
 * Each event as Anthropic framed it (re-framed on one data line), message_start's model set to the routing string.
 * message_start and the first ping (or comment) are held until the first content event, so they do not commit the
 * stream: an error event right after message_start (an overload) is a failure before the first event, failed over
 * or answered with its status; later pings before content carry nothing and are dropped, so what is held is bounded.
 */
function nativeStreamTranslator(routingModel: string): StreamTranslator {
  let counts: AnthropicCounts | undefined;
  let ended = false;
  let held = '';
  let heldKeepAlive = false;
  let committed = false;
  // The span's description (docs/observability.md): message_start's id and model, message_delta's stop reason.
  let described: AnswerDescription = { id: null, model: null, finishReasons: [] };
  return {
    describe: () => described,
    translate(message) {
      if (ended) return CONTINUE;
      if (message.kind === 'comment') return committed ? { frames: `: ${message.text}\n\n` } : holdKeepAlive(`: ${message.text}\n\n`);
      const { data, type } = typedEvent(message);
      if (!committed && type === 'ping') return holdKeepAlive(`event: ping\ndata: ${message.data.replaceAll(/\r\n|\r|\n/g, '')}\n\n`);
      let text = message.data;
      if (type === 'message_start' && isObject(data['message'])) {
        counts = mergeCounts(counts, data['message']['usage']);
        described = { id: data['message']['id'], model: data['message']['model'], finishReasons: described.finishReasons };
        text = withMessageModel(text, routingModel);
      }
      if (type === 'message_delta') {
        counts = mergeCounts(counts, data['usage']);
        const stopReason = isObject(data['delta']) ? data['delta']['stop_reason'] : undefined;
        if (stopReason != null) described = { ...described, finishReasons: [stopReason] };
      }
      const frames = `event: ${type ?? 'message'}\ndata: ${text.replaceAll(/\r\n|\r|\n/g, '')}\n\n`;
      const usage = counts ? openAIUsage(counts).accounting : undefined;
      if (type === 'message_start' && !committed) {
        held = frames + held;
        return usage ? { frames: '', usage } : CONTINUE;
      }
      if (type === 'message_stop' || type === 'error') ended = true;
      const end = type === 'message_stop' ? 'done' : type === 'error' ? 'error' : undefined;
      const failure = type === 'error' ? { failure: anthropicStreamFailure(data) } : {};
      const out = committed ? frames : held + frames;
      committed = true;
      held = '';
      return { frames: out, ...(end ? { end } : {}), ...(usage ? { usage } : {}), ...failure };
    },
  };

  function holdKeepAlive(frames: string): StreamStep {
    if (!heldKeepAlive) held += frames;
    heldKeepAlive = true;
    return CONTINUE;
  }
}

/** message_start's data with `message.model` replaced in place; everything else as the provider wrote it. */
function withMessageModel(text: string, routingModel: string): string {
  const scan = scanTopLevel(text);
  return scan ? editTopLevel(text, scan, new Map([['message', (current: string | undefined) => modelSet(current, routingModel)]])) : text;
}

function modelSet(messageText: string | undefined, routingModel: string): string | undefined {
  return messageText === undefined ? undefined : (setTopLevelString(messageText, 'model', routingModel) ?? messageText);
}
