import OpenAI from 'openai';
import { isolateAwsEnv } from './aws-test-env.js';
import { startGateway } from './gateway.js';
import { PROVIDER_KEY } from './gateway.js';
import { startMockBedrock, type BedrockAnswer, type BedrockCall, type MockBedrockOptions } from './mock-bedrock.js';

// No test reaches AWS: no instance metadata, no credential files, every provider pointed at a mock.
isolateAwsEnv();

/** Routes for the bedrock-dialect tests: Bedrock with an API key on the mock (never amazonaws.com), an openai fallback. */
export const BEDROCK_ROUTES = `version: 1
providers:
  brk:
    dialect: bedrock
    region: us-west-2
    auth: bearer
    api_key_env: MOCK_API_KEY
    base_url_env: BEDROCK_BASE_URL
    errors:
      "503": { status: 503, type: server_error, code: upstream_overloaded, gateway_code: provider_overloaded, retry: true }
  backup:
    base_url: http://127.0.0.1:9/v1
    base_url_env: MOCK_BASE_URL
    api_key_env: MOCK_API_KEY
models:
  backup/gpt-4.1: { fallback: [brk/sonnet] }
  brk/arn: { upstream_model: "arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/a1b2c3" }
  brk/nova: { upstream_model: amazon.nova-pro-v1:0, max_output_tokens: 5000 }
  brk/sonnet: { upstream_model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", max_output_tokens: 64000, reasoning: budget, fallback: [backup/gpt-4.1] }
errors:
  "403": { status: 502, type: server_error, code: provider_auth_failed, gateway_code: provider_auth_failed, retry: false }
  "408": { status: 504, type: server_error, code: upstream_timeout, gateway_code: provider_timeout }
  "424": { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error, retry: false }
  "429": { status: 429, type: rate_limit_error, code: rate_limit_exceeded, gateway_code: provider_rate_limited }
  "4xx": { status: 400, type: invalid_request_error, code: invalid_request, gateway_code: provider_rejected_request }
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

/** A gateway on BEDROCK_ROUTES (or `routes`) in front of a Bedrock mock, and the official openai client on it. */
export async function bedrockGateway(
  t: { teardown(fn: () => unknown): void },
  answer: (call: BedrockCall, n: number) => BedrockAnswer,
  options: { routes?: string; env?: Record<string, string>; upstreamOrigin?: string; maxUpstreamBodyBytes?: number; mock?: MockBedrockOptions } = {},
) {
  const mock = await startMockBedrock(answer, { bearer: PROVIDER_KEY, ...options.mock });
  const gateway = await startGateway({
    routes: options.routes ?? BEDROCK_ROUTES,
    env: { BEDROCK_BASE_URL: mock.origin, AWS_EC2_METADATA_DISABLED: 'true', ...options.env },
    ...(options.upstreamOrigin ? { upstreamOrigin: options.upstreamOrigin } : {}),
    ...(options.maxUpstreamBodyBytes ? { maxUpstreamBodyBytes: options.maxUpstreamBodyBytes } : {}),
  });
  t.teardown(() => Promise.all([gateway.close(), mock.close()]));
  const client = new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 });
  return { mock, gateway, client };
}
