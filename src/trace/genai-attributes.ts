// The GenAI semantic conventions' names in one place (docs/observability.md). Development status upstream: when the
// conventions rename something, this file is where it changes. Defined here rather than taken from
// @opentelemetry/semantic-conventions, whose GenAI constants live in its unstable "incubating" entry.
import type { Attributes } from '@opentelemetry/api';

/** The version of the GenAI conventions these names follow. */
export const GENAI_SEMCONV_VERSION = '1.41.0';

export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  requestStream: 'gen_ai.request.stream',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestTemperature: 'gen_ai.request.temperature',
  requestTopP: 'gen_ai.request.top_p',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  responseTimeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageReasoningOutputTokens: 'gen_ai.usage.reasoning.output_tokens',
  tokenType: 'gen_ai.token.type',
} as const;

/** The gateway's own attributes, beside the conventions'. */
export const GATEWAY = {
  requestId: 'gateway.request_id',
  routingString: 'gateway.routing_string',
  endpoint: 'gateway.endpoint',
  code: 'gateway.code',
  attempt: 'gateway.attempt',
  provider: 'gateway.provider',
  caller: 'gateway.caller',
} as const;

export const OPERATION_CHAT = 'chat';

/**
 * `gen_ai.provider.name` for a dialect: the conventions' well-known value for the API the gateway speaks
 * (an OpenAI-compatible provider speaks OpenAI's). A dialect without one here is named as it is in routes.yaml.
 */
const PROVIDER_NAME_OF_DIALECT: Readonly<Record<string, string>> = {
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'gcp.gemini',
  bedrock: 'aws.bedrock',
};

export function providerNameOf(dialect: string): string {
  return PROVIDER_NAME_OF_DIALECT[dialect] ?? dialect;
}

/** The caller's parsed request: only its sampling parameters are read, never its content. */
export type RequestParameters = { readonly [field: string]: unknown };

/** The caller's sampling parameters the conventions name, when given: numbers only. */
export function requestParameterAttributes(body: RequestParameters, into: Attributes): void {
  const maxTokens = body['max_completion_tokens'] ?? body['max_tokens'];
  const temperature = body['temperature'];
  const topP = body['top_p'];
  if (typeof maxTokens === 'number') into[GEN_AI.requestMaxTokens] = maxTokens;
  if (typeof temperature === 'number') into[GEN_AI.requestTemperature] = temperature;
  if (typeof topP === 'number') into[GEN_AI.requestTopP] = topP;
}

/** `server.address` and `server.port` of an endpoint's base URL, worked out once per endpoint. */
const serverOfBaseUrl = new Map<string, { address: string; port: number }>();

export function serverOf(baseUrl: string): { address: string; port: number } {
  let server = serverOfBaseUrl.get(baseUrl);
  if (!server) {
    const url = new URL(baseUrl);
    server = { address: url.hostname.replace(/^\[|\]$/g, ''), port: url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80 };
    serverOfBaseUrl.set(baseUrl, server);
  }
  return server;
}
