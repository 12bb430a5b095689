import type { StreamStep } from '../../dialects/dialect.js';
import { StreamLimitError, StreamsFullError } from '../../dialects/stream-budget.js';
import type { ErrorRuleSet } from '../../generated/types/route-tables.js';
import { EventTooLargeError } from '../../wire/event-too-large.js';
import { gatewayError, GatewayError } from '../../wire/gateway-error.js';
import { findErrorRule, providerError } from '../../wire/provider-error.js';
import type { RuntimeProvider } from '../runtime-providers.js';
import type { UpstreamReply } from '../upstream.js';

/** What a stream's failure is told of its attempt (relay-options.ts's RelayOptions hold it). */
export interface StreamFailureContext {
  readonly provider: RuntimeProvider;
  readonly reply: UpstreamReply;
  readonly maxEventChars: number;
  readonly errors: ErrorRuleSet;
  readonly stopping: () => boolean;
}

/** Why the stream broke, as the gateway's error: the final event of a committed stream, else the attempt's failure. */
export function failureOf({ provider, reply, maxEventChars, stopping }: StreamFailureContext, error: unknown, idleFired: boolean): GatewayError {
  if (error instanceof GatewayError) return error;
  if (stopping()) return gatewayError('shutting_down', 'The gateway is shutting down; the answer is incomplete.', { provider: provider.id });
  if (idleFired) {
    return gatewayError('upstream_stream_timeout', `The provider "${provider.id}" sent nothing for ${provider.table.streamIdleTimeoutMs} ms (stream_idle_timeout_ms).`, {
      provider: provider.id,
    });
  }
  if (error instanceof StreamsFullError) {
    reply.body.destroy();
    return gatewayError('overloaded', `The streams in flight hold as much as the gateway's memory allows (MAX_STREAM_BYTES_IN_FLIGHT); send the request again.`, {
      provider: provider.id,
      headers: { 'retry-after': '1' },
    });
  }
  if (error instanceof EventTooLargeError || error instanceof StreamLimitError) {
    reply.body.destroy();
    const what = error instanceof StreamLimitError ? error.what : `sent an event larger than ${maxEventChars} characters`;
    // (StreamLimitError's `what` completes the same sentence.)
    return gatewayError('invalid_upstream_response', `The provider "${provider.id}" ${what}.`, { provider: provider.id });
  }
  return interrupted(provider, 'broke the connection mid-stream');
}

/** An error event before the first event: the provider's failure as the HTTP status it stands for, through the error rules. */
export function inBandFailure({ provider, reply, errors }: StreamFailureContext, step: StreamStep): GatewayError {
  const status = step.failure?.status ?? 500;
  const message = step.failure?.details.message ?? `The provider "${provider.id}" reported an error before its first event.`;
  const rule = findErrorRule(provider.table.errors, errors, status);
  return providerError(provider.id, status, reply.headers, { message, code: step.failure?.details.code ?? null }, rule);
}

export function interrupted(provider: RuntimeProvider, what: string): GatewayError {
  return gatewayError('upstream_stream_interrupted', `The provider "${provider.id}" ${what}; the answer is incomplete.`, { provider: provider.id });
}
