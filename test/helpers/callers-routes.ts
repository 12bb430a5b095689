import { createHash } from 'node:crypto';
import { sendJson, startMockUpstream, type MockUpstream } from './mock-upstream.js';
import { chunk, sseBody, startEventStream } from './sse-upstream.js';

/** The keys the callers fixtures use, and the digests routes.yaml holds of them. */
export const SEARCH_KEY = 'gw-search-team-key-for-tests-0123456789';
export const BATCH_KEY = 'gw-batch-team-key-for-tests-9876543210';

export function digestLine(key: string): string {
  return `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/**
 * A routes file with two priced models, one unpriced, and the callers given (YAML under `callers:`, indented two spaces).
 * Prices: 1 USD per million input, 2 per million output, 0.5 per million cached, so a 1,000,000-token prompt costs 1 USD.
 */
export function callersRoutes(callers: string): string {
  return `version: 1
providers:
  mock:
    base_url: http://127.0.0.1:9/v1
    base_url_env: MOCK_BASE_URL
    api_key_env: MOCK_API_KEY
models:
  mock/big: { price: { input_per_mtok: 1, output_per_mtok: 2, cached_input_per_mtok: 0.5 } }
  mock/gpt-4.1-mini: { price: { input_per_mtok: 0.40, output_per_mtok: 1.60, cached_input_per_mtok: 0.10 } }
  mock/unpriced:
callers:
${callers}
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;
}

export interface UsageMock {
  readonly upstream: MockUpstream;
  /** Answers given so far. */
  answered(): number;
}

/**
 * A mock provider whose answers report `usage` (prompt, completion) tokens, streamed or not, after `delayMs`.
 * A stream sends its usage only in its last chunk, as OpenAI does.
 */
export async function startUsageMock(usage: { prompt: number; completion: number; cached?: number } = { prompt: 10, completion: 5 }, delayMs = 0): Promise<UsageMock> {
  let answered = 0;
  const reported = { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion, prompt_tokens_details: { cached_tokens: usage.cached ?? 0 } };
  const upstream = await startMockUpstream(async (request, res) => {
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const body = JSON.parse(request.body) as { model: string; stream?: boolean };
    answered++;
    if (!body.stream) {
      sendJson(res, 200, { id: 'c1', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: reported });
      return;
    }
    startEventStream(res);
    res.write(sseBody([chunk(body.model, { role: 'assistant', content: 'o' })], { done: false }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    res.end(sseBody([chunk(body.model, { content: 'k' }), { ...chunk(body.model, {}), choices: [], usage: reported }]));
  });
  return { upstream, answered: () => answered };
}

export const HI = [{ role: 'user', content: 'hi' }];

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

export const OTHER_KEY = 'gw-other-team-key-for-tests-5555555555';

/** Three callers: search-team with a day and a month budget, batch-team with a month budget only, other-team with none. */
export const BUDGETED_ROUTES = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    models: [mock/big]
    budget: { usd_per_month: 100, usd_per_day: 10 }
  batch-team:
    keys: [${digestLine(BATCH_KEY)}]
    models: [mock/big]
    budget: { usd_per_month: 50 }
  other-team:
    keys: [${digestLine(OTHER_KEY)}]
    models: [mock/big]`);

/** 1,000,000 prompt tokens of which 200,000 cached, 250,000 completion: 0.8 + 0.1 + 0.5 = 1.4 USD an answer of mock/big. */
export const DOLLAR_FORTY_USAGE = { prompt: 1_000_000, completion: 250_000, cached: 200_000 };
