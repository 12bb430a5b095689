import type { ErrorBody } from '../generated/types/error-envelope.js';
import type { Usage } from '../generated/types/usage.js';
import { editTopLevel, replaceSpan, scanTopLevel, topLevelValueAt } from '../engine/json-top-level.js';
import { SSE_DONE, sseData, sseError } from '../engine/sse-format.js';
import type { StreamContext, StreamStep, StreamTranslator } from './dialect.js';

const CONTINUE: StreamStep = { frames: '' };

/**
 * OpenAI-compatible chunks go through as they came, with `model` rewritten in place: one scan per
 * event, no parse or serialise, except for the rare events that carry an error or usage.
 */
export function createOpenAIStreamTranslator({ routingModel, providerId, hideUsage }: StreamContext): StreamTranslator {
  const encodedModel = JSON.stringify(routingModel);
  return {
    translate(message) {
      if (message.kind === 'comment') return { frames: `: ${message.text}\n\n` };
      const { data } = message;
      if (data === '[DONE]') return { frames: SSE_DONE, end: 'done' };
      // Fast path, exact for every event it takes: one pass finds the keys that matter; when "model" is
      // there once and "error" not at all, only the entries before model are walked. Usage goes this way
      // only when absent, or hidden in the form OpenAI puts on every chunk: `,"usage":null` closing the event.
      const keys = findKeys(data);
      if (keys.modelAt >= 0 && !keys.error) {
        const trailingUsageNull = hideUsage && keys.usageAt === data.length - USAGE_NULL_END.length + 1 && data.endsWith(USAGE_NULL_END);
        const span = keys.usageAt < 0 || trailingUsageNull ? topLevelValueAt(data, keys.modelAt) : undefined;
        if (span) {
          // model stands before the usage that closes the event, so the rewrite leaves that ending in place.
          const rewritten = replaceSpan(data, span, encodedModel);
          return { frames: sseData(trailingUsageNull ? `${rewritten.slice(0, -USAGE_NULL_END.length)}}` : rewritten) };
        }
      }
      const scan = scanTopLevel(data);
      // Not a JSON object: nothing to rewrite, and the caller may know what it is.
      if (!scan) return data === '' ? CONTINUE : { frames: sseData(data) };
      if (scan.keys.includes('error')) return { frames: sseError(streamErrorBody(data, providerId)), end: 'error' };
      const usageIndex = scan.keys.lastIndexOf('usage');
      const usageSpan = usageIndex < 0 ? undefined : scan.values[usageIndex]!;
      const usage = usageSpan ? (parseObject(data.slice(usageSpan.start, usageSpan.end)) as Usage | undefined) : undefined;
      const edits = new Map<string, string | undefined>([['model', encodedModel]]);
      if (hideUsage) {
        // The caller did not ask for usage: drop the usage-only chunk and the usage fields of the others.
        const choicesIndex = scan.keys.indexOf('choices');
        const choices = choicesIndex < 0 ? '' : data.slice(scan.values[choicesIndex]!.start, scan.values[choicesIndex]!.end);
        if (usage && /^\[\s*\]$/.test(choices)) return { frames: '', usage };
        if (usageSpan) edits.set('usage', undefined);
      }
      const frames = sseData(editTopLevel(data, scan, edits));
      return usage ? { frames, usage } : { frames };
    },
  };
}

const KEYS_THAT_MATTER = /"(?:model|error|usage)"/g;
const USAGE_NULL_END = ',"usage":null}';

/** Where `"model"` and `"usage"` stand when each appears at most once (-1: absent or repeated), and whether `"error"` appears. */
function findKeys(data: string): { modelAt: number; usageAt: number; error: boolean } {
  KEYS_THAT_MATTER.lastIndex = 0;
  let modelAt = -1;
  let usageAt = -1;
  for (let match = KEYS_THAT_MATTER.exec(data); match; match = KEYS_THAT_MATTER.exec(data)) {
    if (match[0] === '"error"') return { modelAt: -1, usageAt: -1, error: true };
    if (match[0] === '"model"') {
      if (modelAt >= 0) return { modelAt: -1, usageAt: -1, error: false };
      modelAt = match.index;
    } else {
      if (usageAt >= 0) return { modelAt: -1, usageAt: -1, error: false };
      usageAt = match.index;
    }
  }
  return { modelAt, usageAt, error: false };
}

/** A provider's in-stream error event (OpenRouter sends one after the 200) as the gateway's envelope. */
function streamErrorBody(data: string, providerId: string): ErrorBody {
  const event = parseObject(data);
  const error = event?.['error'];
  const details = error !== null && typeof error === 'object' ? (error as Record<string, unknown>) : {};
  const providerCode = typeof details['code'] === 'string' || typeof details['code'] === 'number' ? String(details['code']) : null;
  const message = typeof details['message'] === 'string' ? details['message'] : typeof error === 'string' ? error : null;
  return {
    message: message ?? `The provider "${providerId}" reported an error mid-stream.`,
    type: typeof details['type'] === 'string' ? details['type'] : 'server_error',
    // A numeric code is an HTTP status (OpenRouter's 502), not an OpenAI-style code; provider_code keeps it.
    code: typeof details['code'] === 'string' && !/^\d+$/.test(details['code']) ? details['code'] : 'provider_stream_error',
    param: typeof details['param'] === 'string' ? details['param'] : null,
    origin: 'gateway',
    gateway_code: 'provider_stream_error',
    provider: providerId,
    provider_status: null,
    provider_code: providerCode,
  };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
