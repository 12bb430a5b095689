import type { Test } from 'tap';
import OpenAI from 'openai';
import { startGateway, type RunningGateway } from '../../helpers/gateway.js';
import { completionBody, sendJson, startMockUpstream, type MockUpstream } from '../../helpers/mock-upstream.js';
import { messageOutput, responseObject } from '../../helpers/native-responses-rig.js';

/**
 * OpenAI-dialect routes with and without routes.yaml's word for the gated chat fields: `oai` allows nothing
 * but what its models add, `tiered` allows both fields for all its models.
 */
export const GATED_ROUTES = `version: 1
providers:
  oai:
    base_url: http://127.0.0.1:9/v1
    base_url_env: MOCK_BASE_URL
    api_key_env: MOCK_API_KEY
  tiered:
    base_url: http://127.0.0.1:9/v1
    base_url_env: MOCK_BASE_URL
    api_key_env: MOCK_API_KEY
    allow_fields: [service_tier, web_search_options]
models:
  oai/fast: { upstream_model: gpt-4.1, allow_fields: [service_tier] }
  oai/gpt: { upstream_model: gpt-4.1 }
  oai/resp: { upstream_model: gpt-5, api: responses }
  oai/resp-fast: { upstream_model: gpt-5, api: responses, allow_fields: [service_tier] }
  oai/search: { upstream_model: gpt-4o-search-preview, allow_fields: [web_search_options] }
  tiered/gpt: { upstream_model: gpt-4.1 }
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

export interface GatedRig {
  readonly gateway: RunningGateway;
  /** A real node:http provider answering chat completions and native Responses. */
  readonly upstream: MockUpstream;
  /** The official openai client pointed at the gateway. */
  readonly client: OpenAI;
}

export async function startGatedRig(t: Test): Promise<GatedRig> {
  const upstream = await startMockUpstream((request, res) => {
    if (request.url === '/v1/responses') sendJson(res, 200, responseObject([messageOutput('Hello.')]));
    else sendJson(res, 200, completionBody('gpt-4.1'));
  });
  t.teardown(() => upstream.close());
  const gateway = await startGateway({ routes: GATED_ROUTES, upstreamOrigin: upstream.origin });
  t.teardown(() => gateway.close());
  return { gateway, upstream, client: new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 }) };
}

/** What the provider was sent, parsed: the last request, or the one at `index`. */
export function sentBody(upstream: MockUpstream, index = upstream.requests.length - 1): Record<string, unknown> {
  return JSON.parse(upstream.requests[index]!.body) as Record<string, unknown>;
}
