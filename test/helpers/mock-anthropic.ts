import type { ServerResponse } from 'node:http';
import { PROVIDER_KEY } from './gateway.js';
import { sendJson, startMockUpstream, type MockUpstream, type RecordedRequest } from './mock-upstream.js';
import { bytePieces, startEventStream, writeInPieces } from './sse-upstream.js';

/** Routes for the anthropic-dialect tests: one provider on the mock, a model of each reasoning kind. */
export const ANTHROPIC_ROUTES = `version: 1
providers:
  claude:
    dialect: anthropic
    base_url: http://127.0.0.1:9/v1
    base_url_env: MOCK_BASE_URL
    api_key_env: MOCK_API_KEY
models:
  claude/adaptive: { upstream_model: claude-opus-5-5, max_output_tokens: 128000, reasoning: adaptive }
  claude/budget: { upstream_model: claude-sonnet-4-5, max_output_tokens: 64000, reasoning: budget }
  claude/plain: { upstream_model: claude-plain-1, max_output_tokens: 8192 }
errors:
  "529": { status: 503, type: server_error, code: upstream_overloaded, gateway_code: provider_overloaded, retry: true }
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

/** What the mock answers: a JSON body, or an event stream cut into `pieceSize`-byte writes. */
export type AnthropicAnswer = { readonly status?: number; readonly json: unknown } | { readonly sse: string; readonly pieceSize?: number };

export interface MockAnthropic extends MockUpstream {
  /** The parsed body of every request, in order. */
  readonly bodies: Record<string, unknown>[];
  /** Every way a request broke Anthropic's wire contract (path, headers, JSON); empty when all were right. */
  readonly violations: string[];
}

/**
 * A real node:http server speaking Anthropic's Messages API: it checks each request the way Anthropic would
 * (POST /v1/messages, x-api-key, anthropic-version, a JSON body with model and max_tokens, no Authorization)
 * and answers with `answer(body, call)` for the call-th request.
 */
export async function startMockAnthropic(answer: (body: Record<string, unknown>, call: number) => AnthropicAnswer): Promise<MockAnthropic> {
  const bodies: Record<string, unknown>[] = [];
  const violations: string[] = [];
  const upstream = await startMockUpstream(async (request, res) => {
    const body = check(request, violations);
    bodies.push(body);
    await send(res, answer(body, bodies.length - 1));
  });
  return Object.assign(upstream, { bodies, violations });
}

function check(request: RecordedRequest, violations: string[]): Record<string, unknown> {
  const expect = (ok: boolean, what: string) => void (ok || violations.push(what));
  expect(request.method === 'POST' && request.url === '/v1/messages', `${request.method} ${request.url}`);
  expect(request.headers['x-api-key'] === PROVIDER_KEY, 'x-api-key is not the provider key');
  expect(request.headers['anthropic-version'] === '2023-06-01', `anthropic-version ${request.headers['anthropic-version']}`);
  expect(request.headers['authorization'] === undefined, 'an Authorization header was sent');
  expect(request.headers['content-type'] === 'application/json', `content-type ${request.headers['content-type']}`);
  let body: unknown;
  try {
    body = JSON.parse(request.body);
  } catch {
    violations.push('the body is not JSON');
  }
  const object = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  expect(typeof object['model'] === 'string' && Number.isInteger(object['max_tokens']), 'model or max_tokens missing');
  expect(!('stream_options' in object) && !('reasoning_effort' in object), 'an OpenAI-only field reached Anthropic');
  return object;
}

async function send(res: ServerResponse, answer: AnthropicAnswer): Promise<void> {
  if ('json' in answer) {
    sendJson(res, answer.status ?? 200, answer.json, answer.status === 529 ? { 'retry-after': '3' } : {});
    return;
  }
  startEventStream(res);
  await writeInPieces(res, bytePieces(answer.sse, answer.pieceSize ?? 7), 0);
  res.end();
}

/** Anthropic's framing: each event named on an `event:` line, its JSON on one `data:` line. */
export function anthropicSse(events: readonly Record<string, unknown>[]): string {
  return events.map((event) => `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`).join('');
}

export interface Usage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cache_read_input_tokens?: number;
  readonly cache_creation_input_tokens?: number;
}

/** A non-streamed Messages answer. */
export function message(content: readonly Record<string, unknown>[], stopReason: string, usage: Usage = { input_tokens: 10, output_tokens: 5 }) {
  return { id: 'msg_01Test', type: 'message', role: 'assistant', model: 'claude-upstream', content, stop_reason: stopReason, stop_sequence: null, usage };
}

/** The events of a streamed answer whose blocks are given as their start and their deltas. */
export function streamOf(
  blocks: readonly { readonly start: Record<string, unknown>; readonly deltas: readonly Record<string, unknown>[] }[],
  stopReason: string,
  usage: Usage = { input_tokens: 10, output_tokens: 5 },
): Record<string, unknown>[] {
  const { output_tokens: outputTokens, ...input } = usage;
  const events: Record<string, unknown>[] = [
    { type: 'message_start', message: { ...message([], stopReason, { ...input, output_tokens: 1 } as Usage), stop_reason: null } },
    { type: 'ping' },
  ];
  blocks.forEach((block, index) => {
    events.push({ type: 'content_block_start', index, content_block: block.start });
    for (const delta of block.deltas) events.push({ type: 'content_block_delta', index, delta });
    events.push({ type: 'content_block_stop', index });
  });
  events.push({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } });
  events.push({ type: 'message_stop' });
  return events;
}
