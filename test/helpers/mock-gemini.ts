import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { PROVIDER_KEY, startGateway } from './gateway.js';
import { sendJson, startMockUpstream, type MockUpstream, type RecordedRequest } from './mock-upstream.js';
import { bytePieces, startEventStream, writeInPieces } from './sse-upstream.js';

/** Routes for the gemini-dialect tests: the Gemini API on the mock, a model of each thinking kind, an openai fallback. */
export const GEMINI_ROUTES = `version: 1
providers:
  gem:
    dialect: gemini
    base_url: http://127.0.0.1:9/v1beta
    base_url_env: GEMINI_BASE_URL
    api_key_env: MOCK_API_KEY
    errors:
      "503": { status: 503, type: server_error, code: upstream_overloaded, gateway_code: provider_overloaded, retry: true }
  backup:
    base_url: http://127.0.0.1:9/v1
    base_url_env: MOCK_BASE_URL
    api_key_env: MOCK_API_KEY
models:
  backup/gpt-4.1: { fallback: [gem/flash] }
  gem/flash: { upstream_model: gemini-2.5-flash, max_output_tokens: 65536, reasoning: budget, thinking_budget: { min: 0, max: 24576 }, fallback: [backup/gpt-4.1] }
  gem/flash-lite: { upstream_model: gemini-2.5-flash-lite, max_output_tokens: 65536, reasoning: budget }
  gem/plain: { upstream_model: gemini-2.0-flash, max_output_tokens: 8192 }
  gem/pro: { upstream_model: gemini-2.5-pro, max_output_tokens: 65536, reasoning: budget, thinking_budget: { min: 128, max: 32768 } }
  gem/pro3: { upstream_model: gemini-3-pro-preview, max_output_tokens: 65536, reasoning: levels }
  gem/pro31: { upstream_model: gemini-3.1-pro-preview, max_output_tokens: 65536, reasoning: levels, reasoning_levels: [low, medium, high] }
errors:
  "429": { status: 429, type: rate_limit_error, code: rate_limit_exceeded, gateway_code: provider_rate_limited }
  "4xx": { status: 400, type: invalid_request_error, code: invalid_request, gateway_code: provider_rejected_request }
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

/** What the mock answers: a JSON body, records streamed as SSE cut into `pieceSize`-byte writes, or raw SSE text. */
export type GeminiAnswer =
  | { readonly status?: number; readonly json: unknown }
  | { readonly records: readonly unknown[]; readonly pieceSize?: number }
  | { readonly sse: string; readonly pieceSize?: number };

/** One request as Gemini saw it. */
export interface GeminiCall {
  readonly model: string;
  readonly stream: boolean;
  readonly body: Record<string, unknown>;
  /** The body's text, exactly as sent. */
  readonly text: string;
  readonly headers: RecordedRequest['headers'];
  /** generationConfig.candidateCount: how many candidates (OpenAI choices) the answer is to hold; 1 when not sent. */
  readonly candidateCount: number;
}

export interface MockGemini extends MockUpstream {
  readonly calls: GeminiCall[];
  /** Every way a request broke Gemini's wire contract; empty when all were right. */
  readonly violations: string[];
}

const PATH = /\/models\/([^/:?]+):(generateContent|streamGenerateContent\?alt=sse)$/;

/**
 * A real node:http server speaking Google's generateContent: POST …/models/{model}:generateContent or
 * :streamGenerateContent?alt=sse, the key in x-goog-api-key (or, with `bearer`, an OAuth2 token), never in
 * the URL. Answers `answer(call, n)` for the n-th request.
 */
export async function startMockGemini(answer: (call: GeminiCall, n: number) => GeminiAnswer, options: { bearer?: () => string } = {}): Promise<MockGemini> {
  const calls: GeminiCall[] = [];
  const violations: string[] = [];
  const upstream = await startMockUpstream(async (request, res) => {
    const call = check(request, violations, options.bearer);
    calls.push(call);
    await send(res, answer(call, calls.length - 1));
  });
  return Object.assign(upstream, { calls, violations });
}

function check(request: RecordedRequest, violations: string[], bearer: (() => string) | undefined): GeminiCall {
  const expect = (ok: boolean, what: string) => void (ok || violations.push(what));
  const path = PATH.exec(request.url);
  expect(request.method === 'POST' && path !== null, `${request.method} ${request.url}`);
  expect(!/[?&]key=/.test(request.url), 'the key is in the URL');
  if (bearer) {
    expect(request.headers['authorization'] === `Bearer ${bearer()}`, `authorization ${request.headers['authorization']}`);
    expect(request.headers['x-goog-api-key'] === undefined, 'an API key was sent to Vertex');
  } else {
    expect(request.headers['x-goog-api-key'] === PROVIDER_KEY, 'x-goog-api-key is not the provider key');
    expect(request.headers['authorization'] === undefined, 'an Authorization header was sent');
  }
  expect(request.headers['content-type'] === 'application/json', `content-type ${request.headers['content-type']}`);
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(request.body) as Record<string, unknown>;
  } catch {
    violations.push('the body is not JSON');
  }
  expect(Array.isArray(body['contents']), 'no contents');
  for (const key of ['model', 'messages', 'stream', 'stream_options', 'reasoning_effort', 'max_tokens', 'n']) expect(!(key in body), `an OpenAI field reached Gemini: ${key}`);
  const config = body['generationConfig'];
  const count = typeof config === 'object' && config !== null ? (config as Record<string, unknown>)['candidateCount'] : undefined;
  // Gemini generates 1 to 8 candidates and answers 400 INVALID_ARGUMENT to any other count.
  expect(count === undefined || (Number.isSafeInteger(count) && (count as number) >= 1 && (count as number) <= 8), `candidateCount ${String(count)}`);
  const candidateCount = typeof count === 'number' ? count : 1;
  return { model: path?.[1] ?? '', stream: path?.[2] !== 'generateContent', body, text: request.body, headers: request.headers, candidateCount };
}

async function send(res: ServerResponse, answer: GeminiAnswer): Promise<void> {
  if ('json' in answer) {
    sendJson(res, answer.status ?? 200, answer.json);
    return;
  }
  startEventStream(res);
  const text = 'sse' in answer ? answer.sse : geminiSse(answer.records);
  await writeInPieces(res, bytePieces(text, answer.pieceSize ?? 5), 0);
  res.end();
}

/** Gemini's framing: each record on one `data:` line, events ended by CRLF CRLF, no end marker. */
export function geminiSse(records: readonly unknown[]): string {
  return records.map((record) => `data: ${JSON.stringify(record)}\r\n\r\n`).join('');
}

/** A GenerateContentResponse with one candidate. */
export function response(parts: readonly Record<string, unknown>[], finishReason?: string, usage?: Record<string, number>): Record<string, unknown> {
  const candidate: Record<string, unknown> = { content: { role: 'model', parts }, index: 0 };
  if (finishReason) candidate['finishReason'] = finishReason;
  return { candidates: [candidate], ...(usage ? { usageMetadata: usage } : {}), modelVersion: 'gemini-2.5-flash', responseId: 'resp-gem-1' };
}

/** One candidate of a multi-candidate answer: its parts at its index, and its finishReason if it has one yet. */
export interface CandidateOut {
  readonly index: number;
  readonly parts: readonly Record<string, unknown>[];
  readonly finishReason?: string;
}

/** A GenerateContentResponse (or one streamed record) with these candidates, each carrying its `index` as Gemini does. */
export function candidatesResponse(candidates: readonly CandidateOut[], usage?: Record<string, number>): Record<string, unknown> {
  return {
    candidates: candidates.map(({ index, parts, finishReason }) => ({ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}), index })),
    ...(usage ? { usageMetadata: usage } : {}),
    modelVersion: 'gemini-2.5-flash',
    responseId: 'resp-gem-n',
  };
}

/** The answer to a call that asked for `call.candidateCount` candidates: candidate i says `${text} ${i}`. */
export function answerPerCandidate(call: GeminiCall, text: string, usage = USAGE): Record<string, unknown> {
  return candidatesResponse(Array.from({ length: call.candidateCount }, (_, index) => ({ index, parts: [{ text: `${text} ${index}` }], finishReason: 'STOP' })), usage);
}

export const USAGE = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };

/** A gateway on GEMINI_ROUTES (or `routes`) in front of a Gemini mock, and the official openai client on it. */
export async function geminiGateway(
  t: { teardown(fn: () => unknown): void },
  answer: (call: GeminiCall, n: number) => GeminiAnswer,
  options: { routes?: string; env?: Record<string, string>; upstreamOrigin?: string; maxUpstreamBodyBytes?: number } = {},
) {
  const mock = await startMockGemini(answer);
  const gateway = await startGateway({
    routes: options.routes ?? GEMINI_ROUTES,
    env: { GEMINI_BASE_URL: `${mock.origin}/v1beta`, ...options.env },
    ...(options.upstreamOrigin ? { upstreamOrigin: options.upstreamOrigin } : {}),
    ...(options.maxUpstreamBodyBytes ? { maxUpstreamBodyBytes: options.maxUpstreamBodyBytes } : {}),
  });
  t.teardown(() => Promise.all([gateway.close(), mock.close()]));
  const client = new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 });
  return { mock, gateway, client };
}
