import type { IncomingHttpHeaders } from 'node:http';
import type { ErrorRuleSet, ResolvedErrorRule } from '../generated/types/route-tables.js';
import { GatewayError } from './gateway-error.js';

/** What a provider said about its own failure, read from its error body by the dialect. */
export interface ProviderErrorDetails {
  readonly message: string | null;
  readonly code: string | null;
}

/** Rate-limit hints worth passing through whatever status the gateway answers. */
const PASSED_THROUGH = ['retry-after', 'retry-after-ms'] as const;
const SANE_RETRY_AFTER = /^[A-Za-z0-9 ,:.+-]{1,64}$/;

/** Lookup order: provider exact, provider class, global exact, global class, default. */
export function findErrorRule(providerRules: ErrorRuleSet, globalRules: ErrorRuleSet, status: number): ResolvedErrorRule {
  const exact = String(status);
  const statusClass = `${Math.floor(status / 100)}xx`;
  const rule = providerRules[exact] ?? providerRules[statusClass] ?? globalRules[exact] ?? globalRules[statusClass] ?? globalRules['default'];
  if (!rule) throw new Error('routes tables have no default error rule'); // the build guarantees one
  return rule;
}

/** A provider's non-2xx answer as the gateway's envelope, mapped through the error table. */
export function providerError(
  providerId: string,
  status: number,
  upstreamHeaders: IncomingHttpHeaders,
  details: ProviderErrorDetails,
  rule: ResolvedErrorRule,
): GatewayError {
  const headers: Record<string, string> = {};
  for (const name of PASSED_THROUGH) {
    const value = upstreamHeaders[name];
    if (typeof value === 'string' && SANE_RETRY_AFTER.test(value)) headers[name] = value;
  }
  return new GatewayError(
    rule.status,
    rule.retry,
    {
      message: details.message ?? `The provider "${providerId}" answered HTTP ${status}.`,
      type: rule.type,
      code: rule.code,
      param: null,
      origin: 'gateway',
      gateway_code: rule.gatewayCode,
      provider: providerId,
      provider_status: status,
      provider_code: details.code,
    },
    headers,
  );
}
