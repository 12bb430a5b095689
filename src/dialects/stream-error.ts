import type { ErrorBody } from '../generated/types/error-envelope.js';

/** What a dialect read from a provider's in-stream error event; null where the provider said nothing usable. */
export interface StreamErrorFields {
  readonly message: string | null;
  /** OpenAI-style error type. */
  readonly type: string | null;
  /** OpenAI-style error code. */
  readonly code: string | null;
  readonly param: string | null;
  /** The provider's own code, as the envelope's provider_code. */
  readonly providerCode: string | null;
}

/** A provider's error event sent after the 200, as the gateway's envelope (gateway_code provider_stream_error); shared by every dialect. */
export function providerStreamErrorBody(fields: StreamErrorFields, providerId: string): ErrorBody {
  return {
    message: fields.message ?? `The provider "${providerId}" reported an error mid-stream.`,
    type: fields.type ?? 'server_error',
    code: fields.code ?? 'provider_stream_error',
    param: fields.param,
    origin: 'gateway',
    gateway_code: 'provider_stream_error',
    provider: providerId,
    provider_status: null,
    provider_code: fields.providerCode,
  };
}
