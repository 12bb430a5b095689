// Judging each answer: is it one of the shapes the gateway promises (docs/errors.md, docs/chat-completions.md), and is it
// the answer the provider's behaviour calls for?
import type { CallResult } from './callers.js';
import type { FaultKind, ProviderPlan } from './mock-provider.js';

export interface Verdict {
  /** The outcome class, e.g. "ok: stream ending in [DONE]", "HTTP 502 upstream_timeout", "stream error: upstream_stream_timeout". */
  readonly outcome: string;
  /** Breaks the shapes the gateway promises: a success, a JSON error envelope, or a stream ending in one. */
  readonly malformed: string | null;
  /** Well-formed, but not what the provider's behaviour calls for (wrong code, lost content, leaked usage…). */
  readonly mismatch: string | null;
  /** How much longer the answer took than the provider and the caller themselves spent; null for a caller that left. */
  readonly excessMs: number | null;
}

export const OUTCOME_DISCONNECTED = 'caller disconnected (exempt)';
export const OUTCOME_HUNG = 'hung (no end within the hard cap)';

type Expected =
  | { readonly kind: 'success' }
  | { readonly kind: 'http'; readonly status: number; readonly gatewayCode: string; readonly providerStatus: number | null }
  | { readonly kind: 'stream'; readonly gatewayCode: string };

/** What the gateway must answer to each provider behaviour, under soak-routes.yaml (the shipped error table). */
export const EXPECTED: Readonly<Record<FaultKind, Expected>> = {
  json_ok: { kind: 'success' },
  sse_ok: { kind: 'success' },
  sse_garbage_lines: { kind: 'success' },
  http_429: { kind: 'http', status: 429, gatewayCode: 'provider_rate_limited', providerStatus: 429 },
  http_500: { kind: 'http', status: 502, gatewayCode: 'provider_error', providerStatus: 500 },
  reset_before: { kind: 'http', status: 502, gatewayCode: 'upstream_unreachable', providerStatus: null },
  stall_headers: { kind: 'http', status: 502, gatewayCode: 'upstream_timeout', providerStatus: null },
  json_garbage: { kind: 'http', status: 502, gatewayCode: 'invalid_upstream_response', providerStatus: 200 },
  json_reset_body: { kind: 'http', status: 502, gatewayCode: 'upstream_unreachable', providerStatus: null },
  json_stall_body: { kind: 'http', status: 502, gatewayCode: 'upstream_timeout', providerStatus: null },
  sse_wrong_type: { kind: 'http', status: 502, gatewayCode: 'invalid_upstream_response', providerStatus: 200 },
  sse_reset_mid: { kind: 'stream', gatewayCode: 'upstream_stream_interrupted' },
  sse_fin_mid: { kind: 'stream', gatewayCode: 'upstream_stream_interrupted' },
  sse_close_no_done: { kind: 'stream', gatewayCode: 'upstream_stream_interrupted' },
  // Before its first event a stream is not committed: silence there is answered as JSON.
  sse_stall_first: { kind: 'http', status: 502, gatewayCode: 'upstream_stream_timeout', providerStatus: null },
  sse_stall_mid: { kind: 'stream', gatewayCode: 'upstream_stream_timeout' },
  sse_error_event: { kind: 'stream', gatewayCode: 'provider_stream_error' },
};

interface Envelope {
  readonly message: string;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;
  readonly origin: 'gateway';
  readonly gateway_code: string;
  readonly provider: string | null;
  readonly provider_status: number | null;
  readonly provider_code: string | null;
}

/** What the answer turned out to be, before comparing it with the provider's plan. */
type Shape =
  | { readonly kind: 'ok_json'; readonly content: unknown }
  | { readonly kind: 'ok_stream'; readonly content: string; readonly usageKeys: number; readonly usageObjects: number }
  | { readonly kind: 'error_json'; readonly status: number; readonly envelope: Envelope }
  | { readonly kind: 'error_stream'; readonly envelope: Envelope; readonly content: string }
  | { readonly kind: 'malformed'; readonly reason: string };

export function judge(result: CallResult, plan: ProviderPlan | undefined): Verdict {
  if (result.abortedAt !== null) return { outcome: OUTCOME_DISCONNECTED, malformed: null, mismatch: null, excessMs: null };
  const providerMs = plan ? (plan.doneAt ?? performance.now()) - plan.receivedAt : 0;
  const excessMs = result.durationMs - providerMs - result.pausedMs;
  if (result.hung) return { outcome: OUTCOME_HUNG, malformed: null, mismatch: null, excessMs };
  const shape = shapeOf(result);
  if (shape.kind === 'malformed') return { outcome: 'malformed', malformed: shape.reason, mismatch: null, excessMs };
  return { outcome: outcomeOf(shape), malformed: null, mismatch: mismatchOf(result, shape, plan), excessMs };
}

function outcomeOf(shape: Exclude<Shape, { kind: 'malformed' }>): string {
  switch (shape.kind) {
    case 'ok_json':
      return 'ok: JSON completion';
    case 'ok_stream':
      return 'ok: stream ending in [DONE]';
    case 'error_json':
      return `HTTP ${shape.status} ${shape.envelope.gateway_code}`;
    case 'error_stream':
      return `stream error: ${shape.envelope.gateway_code}`;
  }
}

function shapeOf(result: CallResult): Shape {
  const { status, headers, body } = result;
  if (status === null || headers === null) return { kind: 'malformed', reason: `no answer: ${result.transportError ?? 'unknown'}` };
  if (!result.complete) return { kind: 'malformed', reason: `HTTP ${status} cut off after ${body.length} characters (${result.transportError ?? 'unknown'})` };
  const type = headers['content-type'] ?? '';
  const routing = result.spec.model.routing;
  if (status >= 200 && status < 300 && /^application\/json\b/.test(type)) {
    const answer = parseJson(body);
    if (!isObject(answer)) return { kind: 'malformed', reason: `HTTP ${status} JSON body is not an object: ${body.slice(0, 120)}` };
    if (answer['model'] !== routing) return { kind: 'malformed', reason: `completion model ${JSON.stringify(answer['model'])}, not ${routing}` };
    const choices = answer['choices'];
    const first: unknown = Array.isArray(choices) ? choices[0] : undefined;
    const message = isObject(first) ? first['message'] : undefined;
    return { kind: 'ok_json', content: isObject(message) ? message['content'] : undefined };
  }
  if (status >= 400 && status < 600 && /^application\/json\b/.test(type)) {
    const envelope = envelopeOf(parseJson(body));
    if (typeof envelope === 'string') return { kind: 'malformed', reason: `HTTP ${status} error body: ${envelope}: ${body.slice(0, 200)}` };
    return { kind: 'error_json', status, envelope };
  }
  if (status === 200 && /^text\/event-stream\b/.test(type)) return streamShape(body, routing);
  return { kind: 'malformed', reason: `HTTP ${status} with content-type ${JSON.stringify(type)}: ${body.slice(0, 120)}` };
}

/** The gateway frames every event as `data: …` lines (or `: comment`) ending in a blank line. */
function streamShape(body: string, routing: string): Shape {
  const frames = body.split('\n\n');
  if (frames.pop() !== '') return { kind: 'malformed', reason: `stream does not end at an event boundary: …${JSON.stringify(body.slice(-120))}` };
  const data: string[] = [];
  for (const frame of frames) {
    const lines = frame.split('\n');
    if (lines.every((line) => line.startsWith(':'))) continue;
    if (!lines.every((line) => line.startsWith('data: '))) return { kind: 'malformed', reason: `stream frame with a line that is not data: ${JSON.stringify(frame.slice(0, 120))}` };
    data.push(lines.map((line) => line.slice('data: '.length)).join('\n'));
  }
  const last = data.pop();
  if (last === undefined) return { kind: 'malformed', reason: 'stream without a data event' };
  if (!frames.at(-1)?.startsWith('data: ')) return { kind: 'malformed', reason: 'stream ends with a comment, not [DONE] or an error event' };
  let content = '';
  let usageKeys = 0;
  let usageObjects = 0;
  for (const [i, event] of data.entries()) {
    if (event === '[DONE]') return { kind: 'malformed', reason: `[DONE] at event ${i + 1} of ${data.length + 1}, not last` };
    const chunk = parseJson(event);
    if (!isObject(chunk)) continue; // not a JSON object: passed on as the provider sent it
    if (chunk['model'] !== routing) return { kind: 'malformed', reason: `chunk model ${JSON.stringify(chunk['model'])}, not ${routing}: ${event.slice(0, 160)}` };
    if ('error' in chunk) return { kind: 'malformed', reason: `an error event before the end: ${event.slice(0, 200)}` };
    if ('usage' in chunk) usageKeys++;
    if (isObject(chunk['usage'])) usageObjects++;
    const choices = chunk['choices'];
    const first: unknown = Array.isArray(choices) ? choices[0] : undefined;
    const delta = isObject(first) ? first['delta'] : undefined;
    if (isObject(delta) && typeof delta['content'] === 'string') content += delta['content'];
  }
  if (last === '[DONE]') return { kind: 'ok_stream', content, usageKeys, usageObjects };
  const envelope = envelopeOf(parseJson(last));
  if (typeof envelope === 'string') return { kind: 'malformed', reason: `stream ends with neither [DONE] nor an error envelope (${envelope}): ${last.slice(0, 200)}` };
  return { kind: 'error_stream', envelope, content };
}

const ENVELOPE_FIELDS = ['code', 'gateway_code', 'message', 'origin', 'param', 'provider', 'provider_code', 'provider_status', 'type'];

/** The nine-field envelope, or what is wrong with it. */
function envelopeOf(value: unknown): Envelope | string {
  if (!isObject(value) || Object.keys(value).join() !== 'error' || !isObject(value['error'])) return 'not {"error":{…}}';
  const e = value['error'];
  const keys = Object.keys(e).sort().join();
  if (keys !== ENVELOPE_FIELDS.join()) return `fields ${keys}`;
  const stringOrNull = (v: unknown) => v === null || typeof v === 'string';
  if (typeof e['message'] !== 'string' || typeof e['type'] !== 'string' || typeof e['gateway_code'] !== 'string') return 'message/type/gateway_code not strings';
  if (!stringOrNull(e['code']) || !stringOrNull(e['param']) || !stringOrNull(e['provider']) || !stringOrNull(e['provider_code'])) {
    return 'code/param/provider/provider_code not string or null';
  }
  if (e['origin'] !== 'gateway') return 'origin is not "gateway"';
  if (e['provider_status'] !== null && !Number.isInteger(e['provider_status'])) return 'provider_status not an integer or null';
  return e as unknown as Envelope;
}

/** Compares a well-formed answer with what the provider did. */
function mismatchOf(result: CallResult, shape: Exclude<Shape, { kind: 'malformed' }>, plan: ProviderPlan | undefined): string | null {
  const { spec } = result;
  if (result.headers?.['x-request-id'] !== spec.requestId) return `x-request-id ${JSON.stringify(result.headers?.['x-request-id'])}`;
  if (!plan) return `the provider never saw the request, yet the gateway answered ${outcomeOf(shape)}`;
  if (plan.problems.length > 0) return `the provider received a wrong request: ${plan.problems.join('; ')}`;
  if (plan.stallCapHit) return `the gateway never gave up on a stalled provider (${plan.kind})`;
  const expected = EXPECTED[plan.kind];
  const got = shape.kind === 'error_json' || shape.kind === 'error_stream' ? `${outcomeOf(shape)} (${shape.envelope.message})` : outcomeOf(shape);
  switch (expected.kind) {
    case 'success':
      if (shape.kind === 'ok_json' && !spec.stream) return shape.content === plan.content ? null : 'completion content differs from what the provider sent';
      if (shape.kind !== 'ok_stream' || !spec.stream) return `${plan.kind}: expected success, got ${got}`;
      if (shape.content !== plan.content) return `${plan.kind}: streamed content differs (${shape.content.length} of ${plan.content.length} characters)`;
      if (spec.includeUsage && shape.usageObjects !== 1) return `${plan.kind}: caller asked for usage, got ${shape.usageObjects} usage chunks`;
      if (!spec.includeUsage && shape.usageKeys > 0) return `${plan.kind}: caller did not ask for usage, yet ${shape.usageKeys} chunks carry it`;
      return null;
    case 'http':
      if (shape.kind !== 'error_json') return `${plan.kind}: expected HTTP ${expected.status} ${expected.gatewayCode}, got ${got}`;
      if (shape.status !== expected.status || shape.envelope.gateway_code !== expected.gatewayCode) {
        return `${plan.kind}: expected HTTP ${expected.status} ${expected.gatewayCode}, got ${got}`;
      }
      return envelopeMismatch(shape.envelope, plan, spec.model.provider, expected.providerStatus) ?? retryAfterMismatch(result, plan);
    case 'stream':
      if (shape.kind !== 'error_stream') return `${plan.kind}: expected stream error ${expected.gatewayCode}, got ${got}`;
      if (shape.envelope.gateway_code !== expected.gatewayCode) return `${plan.kind}: expected stream error ${expected.gatewayCode}, got ${got}`;
      if (!plan.content.startsWith(shape.content)) return `${plan.kind}: the content before the error is not what the provider sent`;
      return envelopeMismatch(shape.envelope, plan, spec.model.provider, null);
  }
}

function envelopeMismatch(envelope: Envelope, plan: ProviderPlan, provider: string, providerStatus: number | null): string | null {
  if (envelope.provider !== provider) return `${plan.kind}: envelope provider ${JSON.stringify(envelope.provider)}, not ${provider}`;
  if (envelope.provider_status !== providerStatus) return `${plan.kind}: provider_status ${envelope.provider_status}, not ${providerStatus}`;
  if (plan.providerCode !== undefined && envelope.provider_code !== plan.providerCode) {
    return `${plan.kind}: provider_code ${JSON.stringify(envelope.provider_code)}, not ${JSON.stringify(plan.providerCode)}`;
  }
  return null;
}

function retryAfterMismatch(result: CallResult, plan: ProviderPlan): string | null {
  if (plan.kind !== 'http_429') return null;
  return result.headers?.['retry-after'] === '7' ? null : `http_429: retry-after ${JSON.stringify(result.headers?.['retry-after'])}, not "7"`;
}

/**
 * For a caller that left while the provider was still answering (or stalling): how long until the gateway
 * closed its request to the provider. null when there was nothing to stop; Infinity when it never did.
 */
export function abortDelayMs(result: CallResult, plan: ProviderPlan | undefined): number | null {
  if (result.abortedAt === null || !plan) return null;
  const from = Math.max(result.abortedAt, plan.receivedAt);
  if (plan.closedAt !== undefined && plan.closedAt <= from) return null;
  return (plan.closedAt ?? Infinity) - from;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
