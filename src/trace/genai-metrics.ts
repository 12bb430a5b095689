import type { Attributes, Histogram, Meter } from '@opentelemetry/api';
import { GEN_AI } from './genai-attributes.js';

/** The GenAI metrics of the conventions: per upstream attempt (client) and per request at the gateway's edge (server). */
export interface GenAiMetrics {
  /** One upstream attempt: its duration, its tokens when it answered, its time to first chunk when streamed. */
  attempt(attributes: Attributes, seconds: number, tokens: { input: number | null; output: number | null } | null, firstChunkSeconds: number | null): void;
  /** One request as the caller saw it: its duration and, streamed, its time to first token. */
  request(attributes: Attributes, seconds: number, firstTokenSeconds: number | null): void;
}

/** The conventions' advised buckets: seconds doubling from 10 ms, tokens by fours. */
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const FIRST_CHUNK_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

export function createGenAiMetrics(meter: Meter): GenAiMetrics {
  const seconds = (name: string, description: string, buckets: number[]): Histogram =>
    meter.createHistogram(name, { description, unit: 's', advice: { explicitBucketBoundaries: buckets } });
  const operationDuration = seconds('gen_ai.client.operation.duration', 'Duration of one upstream attempt.', DURATION_BUCKETS);
  const firstChunk = seconds('gen_ai.client.operation.time_to_first_chunk', 'From sending a streamed attempt to its first chunk relayed.', FIRST_CHUNK_BUCKETS);
  const tokenUsage = meter.createHistogram('gen_ai.client.token.usage', {
    description: 'Tokens of one answered attempt, by gen_ai.token.type.',
    unit: '{token}',
    advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
  });
  const requestDuration = seconds('gen_ai.server.request.duration', 'From a request reaching the gateway to its answer ending.', DURATION_BUCKETS);
  const firstToken = seconds('gen_ai.server.time_to_first_token', 'From a streamed request reaching the gateway to its first event sent.', FIRST_CHUNK_BUCKETS);

  return {
    attempt(attributes, duration, tokens, firstChunkSeconds) {
      operationDuration.record(duration, attributes);
      if (firstChunkSeconds !== null) firstChunk.record(firstChunkSeconds, attributes);
      if (tokens?.input != null) tokenUsage.record(tokens.input, { ...attributes, [GEN_AI.tokenType]: 'input' });
      if (tokens?.output != null) tokenUsage.record(tokens.output, { ...attributes, [GEN_AI.tokenType]: 'output' });
    },
    request(attributes, duration, firstTokenSeconds) {
      requestDuration.record(duration, attributes);
      if (firstTokenSeconds !== null) firstToken.record(firstTokenSeconds, attributes);
    },
  };
}
