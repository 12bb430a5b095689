import type { ServerResponse } from 'node:http';
import type { Test } from 'tap';
import { startGateway, type RunningGateway } from './gateway.js';
import { sendJson, startMockUpstream, type MockUpstream, type RecordedRequest } from './mock-upstream.js';
import { startEventStream } from './sse-upstream.js';

/**
 * One real mock OpenAI (node:http) serving both its APIs: `/v1/responses` natively and `/v1/chat/completions`.
 * `oai/resp` is marked `api: responses`; `oai/chat` is not; `oai/resp-to-chat` falls over to `backup/chat` (another provider at the same mock, chat only).
 */
export const NATIVE_ROUTES = `version: 1
providers:
  oai:
    base_url: http://127.0.0.1:9/v1
    base_url_env: OAI_BASE_URL
    api_key_env: MOCK_API_KEY
  backup:
    base_url: http://127.0.0.1:9/v1
    base_url_env: OAI_BASE_URL
    api_key_env: MOCK_API_KEY
models:
  backup/chat: { upstream_model: gpt-backup }
  oai/chat: { upstream_model: gpt-chat }
  oai/resp: { upstream_model: gpt-5-resp, api: responses, price: { input_per_mtok: 1, output_per_mtok: 2 } }
  oai/resp-to-chat: { upstream_model: gpt-down, api: responses, fallback: [backup/chat] }
  oai/resp-tools: { upstream_model: gpt-5-resp, api: responses, allow_fields: [built_in_tools] }
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

/** How the mock answers one request: it may write anything, at any pace. */
export type NativeScript = (request: RecordedRequest, body: Record<string, unknown>, res: ServerResponse) => void;

export interface NativeRig {
  readonly gateway: RunningGateway;
  readonly oai: MockUpstream;
  /** Replace to change what the provider answers. */
  answer: NativeScript;
}

export async function startNativeRig(t: Test, options: { maxUpstreamBodyBytes?: number } = {}): Promise<NativeRig> {
  const rig = { answer: (_request, _body, res) => sendJson(res, 500, { error: { message: 'no script' } }) } as NativeRig & { answer: NativeScript };
  const oai = await startMockUpstream((request, res) => {
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(request.body) as Record<string, unknown>;
    } catch {
      // the script sees {}
    }
    rig.answer(request, body, res);
  });
  const gateway = await startGateway({
    routes: NATIVE_ROUTES,
    env: { OAI_BASE_URL: `${oai.origin}/v1` },
    ...(options.maxUpstreamBodyBytes ? { maxUpstreamBodyBytes: options.maxUpstreamBodyBytes } : {}),
  });
  t.teardown(() => Promise.all([gateway.close(), oai.close()]));
  return Object.assign(rig, { gateway, oai });
}

const USAGE = { input_tokens: 20, input_tokens_details: { cached_tokens: 8 }, output_tokens: 6, output_tokens_details: { reasoning_tokens: 2 }, total_tokens: 26 };

/** A Responses output message item. */
export function messageOutput(text: string, id = 'msg_up1') {
  return { type: 'message', id, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] };
}

/** A response object as OpenAI answers it, with the upstream's own model. */
export function responseObject(output: unknown[], extra: Record<string, unknown> = {}) {
  return {
    id: 'resp_up1',
    object: 'response',
    created_at: 1_763_700_000,
    status: 'completed',
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: 'gpt-5-resp-2026',
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    store: false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: USAGE,
    metadata: {},
    ...extra,
  };
}

/** The events of a streamed answer of one text message, as OpenAI numbers and frames them; `end: false` leaves out response.completed. */
export function responseEvents(text: readonly string[], options: { end?: boolean } = {}): Record<string, unknown>[] {
  const inProgress = { ...responseObject([]), status: 'in_progress', usage: null };
  const at = { item_id: 'msg_up1', output_index: 0, content_index: 0 };
  const events: Record<string, unknown>[] = [
    { type: 'response.created', response: inProgress },
    { type: 'response.in_progress', response: inProgress },
    { type: 'response.output_item.added', output_index: 0, item: { ...messageOutput(''), status: 'in_progress', content: [] } },
    { type: 'response.content_part.added', ...at, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } },
    ...text.map((delta) => ({ type: 'response.output_text.delta', ...at, delta, logprobs: [] })),
    { type: 'response.output_text.done', ...at, text: text.join(''), logprobs: [] },
    { type: 'response.content_part.done', ...at, part: { type: 'output_text', text: text.join(''), annotations: [], logprobs: [] } },
    { type: 'response.output_item.done', output_index: 0, item: messageOutput(text.join('')) },
  ];
  if (options.end ?? true) events.push({ type: 'response.completed', response: responseObject([messageOutput(text.join(''))]) });
  return events.map((event, sequence) => ({ ...event, sequence_number: sequence }));
}

/** Events framed as OpenAI frames them: `event:` line and one data line. */
export function framed(events: readonly Record<string, unknown>[]): string {
  return events.map((event) => `event: ${String(event['type'])}\ndata: ${JSON.stringify(event)}\n\n`).join('');
}

/** Writes a whole event stream in one go. */
export function sendEvents(res: ServerResponse, text: string): void {
  startEventStream(res);
  res.end(text);
}
