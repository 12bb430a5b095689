import type { ServerResponse } from 'node:http';
import type { Test } from 'tap';
import { startGateway, type RunningGateway } from './gateway.js';
import { sendJson, startMockUpstream, type MockUpstream, type RecordedRequest } from './mock-upstream.js';
import { startEventStream } from './sse-upstream.js';

/**
 * Two real mock providers, one per dialect, behind one gateway: `claude/*` speaks Anthropic's Messages API,
 * `oai/*` OpenAI's chat completions; the `*-to-*` routes fail over from one dialect to the other.
 */
export const INBOUND_ROUTES = `version: 1
providers:
  claude:
    dialect: anthropic
    base_url: http://127.0.0.1:9/v1
    base_url_env: CLAUDE_BASE_URL
    api_key_env: MOCK_API_KEY
  oai:
    base_url: http://127.0.0.1:9/v1
    base_url_env: OAI_BASE_URL
    api_key_env: MOCK_API_KEY
  plain:
    base_url: http://127.0.0.1:9/v1
    base_url_env: OAI_BASE_URL
    stream_usage: false
models:
  claude/sonnet: { upstream_model: claude-sonnet-4-5, max_output_tokens: 64000, reasoning: budget }
  claude/to-oai: { upstream_model: claude-down, max_output_tokens: 8192, fallback: [oai/gpt] }
  oai/gpt: { upstream_model: gpt-4.1 }
  oai/to-claude: { upstream_model: gpt-down, fallback: [claude/sonnet] }
  plain/gpt: { upstream_model: gpt-plain }
errors:
  "529": { status: 503, type: server_error, code: upstream_overloaded, gateway_code: provider_overloaded, retry: true }
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

/** What a mock answers: JSON with a status, or an event stream of these frames. */
export type MockAnswer = { readonly status?: number; readonly json: unknown; readonly headers?: Record<string, string> } | { readonly sse: string };
export type MockScript = (request: RecordedRequest, body: Record<string, unknown>) => MockAnswer;

export interface InboundRig {
  readonly gateway: RunningGateway;
  readonly claude: MockUpstream;
  readonly oai: MockUpstream;
  /** Replace to change what each provider answers. */
  claudeAnswer: MockScript;
  oaiAnswer: MockScript;
}

export async function startInboundRig(t: Test, options: { callerKeys?: readonly string[]; maxUpstreamBodyBytes?: number; claudeHandler?: (res: ServerResponse) => void; oaiHandler?: (res: ServerResponse) => void } = {}): Promise<InboundRig> {
  const rig = { claudeAnswer: (() => ({ status: 500, json: {} })) as MockScript, oaiAnswer: (() => ({ status: 500, json: {} })) as MockScript } as InboundRig;
  const serve = (pick: () => MockScript) => (request: RecordedRequest, res: ServerResponse) => {
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(request.body) as Record<string, unknown>;
    } catch {
      // a test may send something else; the script sees {}
    }
    answer(res, pick()(request, body));
  };
  const claude = await startMockUpstream(options.claudeHandler ? (_request, res) => options.claudeHandler!(res) : serve(() => rig.claudeAnswer));
  const oai = await startMockUpstream(options.oaiHandler ? (_request, res) => options.oaiHandler!(res) : serve(() => rig.oaiAnswer));
  const gateway = await startGateway({
    routes: INBOUND_ROUTES,
    env: { CLAUDE_BASE_URL: `${claude.origin}/v1`, OAI_BASE_URL: `${oai.origin}/v1` },
    ...(options.callerKeys ? { callerKeys: options.callerKeys } : {}),
    ...(options.maxUpstreamBodyBytes ? { maxUpstreamBodyBytes: options.maxUpstreamBodyBytes } : {}),
  });
  t.teardown(() => Promise.all([gateway.close(), claude.close(), oai.close()]));
  return Object.assign(rig, { gateway, claude, oai });
}

function answer(res: ServerResponse, reply: MockAnswer): void {
  if ('json' in reply) {
    sendJson(res, reply.status ?? 200, reply.json, reply.headers);
    return;
  }
  startEventStream(res);
  res.end(reply.sse);
}

/** An OpenAI chat.completion with this message and finish reason. */
export function completion(message: Record<string, unknown>, finishReason = 'stop', usage: Record<string, unknown> = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17, prompt_tokens_details: { cached_tokens: 4 } }) {
  return { id: 'chatcmpl-1', object: 'chat.completion', created: 1_763_700_000, model: 'gpt-4.1', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason, logprobs: null }], usage };
}

/** An OpenAI chat stream of these deltas, the finish reason, a usage chunk and [DONE]. */
export function chatStream(deltas: readonly Record<string, unknown>[], finishReason = 'stop'): string {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices, ...extra })}\n\n`;
  let text = chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  for (const delta of deltas) text += chunk([{ index: 0, delta, finish_reason: null }]);
  text += chunk([{ index: 0, delta: {}, finish_reason: finishReason }]);
  text += chunk([], { usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } });
  return `${text}data: [DONE]\n\n`;
}

/** A Messages answer. */
export function claudeMessage(content: readonly Record<string, unknown>[], stopReason = 'end_turn') {
  return { id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content, stop_reason: stopReason, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 2 } };
}

/** Anthropic's event stream for these blocks (each given as its start and its deltas). */
export function claudeStream(blocks: readonly { start: Record<string, unknown>; deltas: readonly Record<string, unknown>[] }[], stopReason = 'end_turn'): string {
  const events: Record<string, unknown>[] = [
    { type: 'message_start', message: { ...claudeMessage([]), stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } },
    { type: 'ping' },
  ];
  blocks.forEach((block, index) => {
    events.push({ type: 'content_block_start', index, content_block: block.start });
    for (const delta of block.deltas) events.push({ type: 'content_block_delta', index, delta });
    events.push({ type: 'content_block_stop', index });
  });
  events.push({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } });
  events.push({ type: 'message_stop' });
  return events.map((event) => `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`).join('');
}

/** The SSE events of a response body, parsed: event name and data. */
export function eventsOf(text: string): { event: string | undefined; data: Record<string, unknown> }[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => {
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}
