import type { ModelTable } from '../generated/types/route-tables.js';
import { attempt, type AttemptRequest } from './attempt.js';
import { chooseEndpoint, endpointBit } from './choose-endpoint.js';
import { gatewayError, GatewayError } from './gateway-error.js';
import { boundedText } from './log-fields.js';
import { round, type RequestRecord } from './request-log.js';
import type { RuntimeProvider } from './runtime-providers.js';

export interface FailoverPlan {
  readonly roster: ReadonlyMap<string, ModelTable>;
  readonly providers: ReadonlyMap<string, RuntimeProvider>;
  readonly maxAttempts: number;
}

/** One attempt as the log line lists it. */
export interface AttemptRecord {
  readonly route: string;
  readonly endpoint: string;
  /** ok, the provider's HTTP status, or the gateway code of the failure. */
  readonly outcome: string;
  readonly ms: number;
}

/** Routing strings are logged at most this long per attempt, so a line with max_attempts attempts stays bounded. */
const MAX_LOGGED_ROUTE_CHARS = 64;
/** Transport failures another endpoint may not have (README: Failover). */
const FAILOVER_CODES = new Set(['upstream_connect_timeout', 'upstream_unreachable', 'upstream_timeout']);

/**
 * Serves the request from `routingString`'s route, failing over to its provider's other endpoints, then to each
 * fallback in order: never the same endpoint twice, at most maxAttempts attempts, and never once the caller has
 * been sent anything. When every attempt fails, the last one's error is the answer.
 */
export async function serveWithFailover(plan: FailoverPlan, request: AttemptRequest, routingString: string, route: ModelTable): Promise<void> {
  const { res, record } = request;
  const fallback = route.fallback;
  // Which endpoints were tried, per provider: only needed when a fallback may name the same provider again.
  const tried = fallback.length > 0 ? new Map<string, number>() : undefined;
  let attempts = 0;
  let lastError: unknown;
  for (let r = -1; r < fallback.length && attempts < plan.maxAttempts; r++) {
    const name = r < 0 ? routingString : fallback[r]!;
    const target = r < 0 ? route : plan.roster.get(name)!; // the build checked that every fallback is on the roster
    const provider = plan.providers.get(target.provider);
    if (!provider) throw new Error(`roster names provider "${target.provider}" that the tables lack`); // the build forbids this
    if (provider.ready.length === 0) {
      if (lastError === undefined) record.provider = provider.id;
      lastError ??= notConfigured(provider);
      continue;
    }
    let triedHere = tried?.get(provider.id) ?? 0;
    for (let endpoint = chooseEndpoint(provider, triedHere); endpoint && attempts < plan.maxAttempts; endpoint = chooseEndpoint(provider, triedHere)) {
      const stopped = request.stoppedWith();
      if (stopped) throw stopped;
      attempts++;
      triedHere |= endpointBit(endpoint);
      record.provider = provider.id;
      res.setHeader('x-gateway-served-by', servedBy(name, endpoint.name));
      const startedAt = performance.now();
      try {
        await attempt(request, target, provider, endpoint);
        logAttempt(record, name, endpoint.name, 'ok', startedAt);
        return;
      } catch (error) {
        logAttempt(record, name, endpoint.name, outcomeOf(error), startedAt);
        if (res.headersSent || request.stoppedWith() || !worthFailover(error)) throw error;
        lastError = error;
      }
    }
    tried?.set(provider.id, triedHere);
  }
  throw lastError;
}

/** Whether another endpoint may answer where this one failed: its transport, its key or its capacity, not the request. */
export function worthFailover(error: unknown): boolean {
  if (!(error instanceof GatewayError)) return false;
  const code = error.body.gateway_code;
  if (code !== null && FAILOVER_CODES.has(code) && error.body.provider_status === null) return true;
  const status = error.body.provider_status;
  if (status === null || code === 'invalid_upstream_response') return false;
  return status === 401 || status === 403 || status === 429 || status >= 500;
}

function outcomeOf(error: unknown): string {
  if (!(error instanceof GatewayError)) return 'internal_error';
  if (error.body.provider_status !== null && error.body.gateway_code !== 'invalid_upstream_response') return String(error.body.provider_status);
  return error.body.gateway_code ?? 'error';
}

function logAttempt(record: RequestRecord, route: string, endpoint: string, outcome: string, startedAt: number): void {
  (record.attempts ??= []).push({ route: boundedText(route, MAX_LOGGED_ROUTE_CHARS), endpoint, outcome, ms: round(performance.now() - startedAt) });
}

/** `<routing string>#<endpoint name>`; a routing string with characters a header cannot carry goes percent-encoded. */
function servedBy(routingString: string, endpointName: string): string {
  const value = `${routingString}#${endpointName}`;
  return /^[\x21-\x7e]*$/.test(value) ? value : encodeURI(value);
}

function notConfigured(provider: RuntimeProvider): GatewayError {
  return gatewayError('provider_not_configured', `The provider "${provider.id}" is not configured: set ${provider.missingKeyEnv} on the gateway.`, {
    provider: provider.id,
  });
}
