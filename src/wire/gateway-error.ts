import type { ErrorBody } from '../generated/types/error-envelope.js';
import { GATEWAY_ERRORS, type GatewayErrorCode } from './gateway-errors.js';

/** Envelope fields a thrower may fill; the rest are null. */
export interface ErrorDetails {
  /** A finer OpenAI-style code than the table's, e.g. missing_required_parameter. */
  readonly code?: string;
  /** A finer type than the table's, e.g. tokens for a rate limit on tokens. */
  readonly type?: string;
  readonly param?: string | null;
  readonly provider?: string | null;
  readonly providerStatus?: number | null;
  readonly providerCode?: string | null;
  /** Headers to answer with, e.g. Retry-After passed through from a provider. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** An error to be answered to the caller as the gateway's envelope with `status` and x-should-retry. */
export class GatewayError extends Error {
  readonly status: number;
  readonly retry: boolean;
  readonly body: ErrorBody;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, retry: boolean, body: ErrorBody, headers: Readonly<Record<string, string>> = {}) {
    super(body.message);
    this.name = 'GatewayError';
    this.status = status;
    this.retry = retry;
    this.body = body;
    this.headers = headers;
  }
}

/** One of the gateway's own errors, from GATEWAY_ERRORS. */
export function gatewayError(gatewayCode: GatewayErrorCode, message: string, details: ErrorDetails = {}): GatewayError {
  const entry = GATEWAY_ERRORS[gatewayCode];
  return new GatewayError(
    entry.status,
    entry.retry,
    {
      message,
      type: details.type ?? entry.type,
      code: details.code ?? entry.code,
      param: details.param ?? null,
      origin: 'gateway',
      gateway_code: gatewayCode,
      provider: details.provider ?? null,
      provider_status: details.providerStatus ?? null,
      provider_code: details.providerCode ?? null,
    },
    details.headers,
  );
}
