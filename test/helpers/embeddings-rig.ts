// Embeddings tests' shared rig: one mock serving both dialects (openai-compatible `/oai/v1/embeddings`, Gemini
// `/gem/v1beta/models/{m}:batchEmbedContents`, and a provider of two endpoints whose first answers 503), and a
// routes file naming its own base_url_env variables.
import type { ServerResponse } from 'node:http';
import { sendJson, startMockUpstream, type MockUpstream, type RecordedRequest } from './mock-upstream.js';
import { startGateway, type GatewayTestOptions, type RunningGateway } from './gateway.js';

export const OAI_KEY = 'sk-emb-oai-key-for-tests-11aa';
export const GEM_KEY = 'gem-emb-key-for-tests-22bb';

/** Values exactly representable as float32 (Gemini's are), so a client decoding base64 reads them back exactly. */
export function vectorFor(index: number): number[] {
  return [Math.fround(0.1 * (index + 1)), -1.5, Math.fround(-0.0123456789), Math.fround(3.25e-5)];
}

/** Little-endian float32 bytes, base64: what OpenAI sends for `encoding_format: "base64"`. */
export function float32Base64(values: readonly number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}

export const EMBEDDINGS_ROUTES = `version: 1
providers:
  claude:
    dialect: anthropic
    base_url: http://127.0.0.1:9/v1
    base_url_env: EMB_CLAUDE_BASE_URL
    api_key_env: EMB_OAI_KEY
  gem:
    dialect: gemini
    base_url: http://127.0.0.1:9/v1beta
    base_url_env: EMB_GEM_BASE_URL
    api_key_env: EMB_GEM_KEY
  oai:
    base_url: http://127.0.0.1:9/v1
    base_url_env: EMB_OAI_BASE_URL
    api_key_env: EMB_OAI_KEY
  two:
    endpoints:
      - { name: first, base_url: "http://127.0.0.1:9/v1", base_url_env: EMB_TWO_FIRST_URL, api_key_env: EMB_OAI_KEY, weight: 1000 }
      - { name: second, base_url: "http://127.0.0.1:9/v1", base_url_env: EMB_TWO_SECOND_URL, api_key_env: EMB_OAI_KEY }
models:
  claude/sonnet: { max_output_tokens: 1000 }
  gem/embed: { kind: embedding, upstream_model: gemini-embedding-001 }
  gem/flash:
  oai/chat:
  oai/embed: { kind: embedding, upstream_model: text-embedding-3-small, price: { input_per_mtok: 1, output_per_mtok: 0 } }
  two/embed: { kind: embedding, upstream_model: text-embedding-3-large }
errors:
  "4xx": { status: 400, type: invalid_request_error, code: invalid_request, gateway_code: provider_rejected_request }
  "429": { status: 429, type: rate_limit_error, code: rate_limit_exceeded, gateway_code: provider_rate_limited }
  "5xx": { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

/** The answer the mock gives one request, or undefined for its default answer. */
export type Override = (request: RecordedRequest, res: ServerResponse) => boolean;

export interface EmbeddingsRig {
  readonly gateway: RunningGateway;
  readonly mock: MockUpstream;
  /** Replaces the mock's answers until the next call (undefined: the default answers again). */
  answerWith(override: Override | undefined): void;
  /** POST /v1/embeddings (or `path`) with a JSON body (a string goes as it is). */
  post(body: unknown, path?: string, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

/** The mock's default answers: OpenAI's shape (floats, or base64 when asked), Gemini's, and a 503 on the `first` endpoint. */
function defaultAnswer(request: RecordedRequest, res: ServerResponse): void {
  if (request.url.startsWith('/first/')) return sendJson(res, 503, { error: { message: 'overloaded', type: 'server_error', code: null } });
  if (request.url.startsWith('/gem/')) {
    const { requests } = JSON.parse(request.body) as { requests: unknown[] };
    return sendJson(res, 200, { embeddings: requests.map((_, i) => ({ values: vectorFor(i) })) });
  }
  const body = JSON.parse(request.body) as { input: unknown; model: string; encoding_format?: string };
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  const data = inputs.map((_, index) => ({ object: 'embedding', index, embedding: body.encoding_format === 'base64' ? float32Base64(vectorFor(index)) : vectorFor(index) }));
  sendJson(res, 200, { object: 'list', data, model: body.model, usage: { prompt_tokens: 7 * inputs.length, total_tokens: 7 * inputs.length } });
}

/** One mock and one in-process gateway on EMBEDDINGS_ROUTES (or `routes`), for a whole test file. */
export async function startEmbeddingsRig(options: Omit<GatewayTestOptions, 'upstreamOrigin'> = {}): Promise<EmbeddingsRig> {
  let override: Override | undefined;
  const mock = await startMockUpstream((request, res) => {
    if (override?.(request, res)) return;
    defaultAnswer(request, res);
  });
  const origin = mock.origin;
  const gateway = await startGateway({
    routes: EMBEDDINGS_ROUTES,
    ...options,
    env: {
      EMB_OAI_BASE_URL: `${origin}/oai/v1`,
      EMB_GEM_BASE_URL: `${origin}/gem/v1beta`,
      EMB_CLAUDE_BASE_URL: `${origin}/claude/v1`,
      EMB_TWO_FIRST_URL: `${origin}/first/v1`,
      EMB_TWO_SECOND_URL: `${origin}/second/v1`,
      EMB_OAI_KEY: OAI_KEY,
      EMB_GEM_KEY: GEM_KEY,
      ...options.env,
    },
  });
  return {
    gateway,
    mock,
    answerWith(next) {
      override = next;
    },
    post: (body, path = '/v1/embeddings', headers = {}) =>
      fetch(`${gateway.origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) }),
    close: async () => {
      await gateway.close();
      await mock.close();
    },
  };
}
