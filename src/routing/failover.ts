import type { ModelTable } from '../generated/types/route-tables.js';
import { attempt, prepareCall, type AttemptRequest, type PreparedCall, type StreamHooks } from './attempt.js';
import { chooseEndpoint, endpointBit } from './choose-endpoint.js';
import { retryAfterMs, type Admission } from './circuit-breaker.js';
import { gatewayError, GatewayError } from '../wire/gateway-error.js';
import { boundedText } from '../observe/log-fields.js';
import { round, type AttemptRecord, type RequestRecord } from '../observe/request-log.js';
import type { RuntimeEndpoint, RuntimeProvider } from './runtime-providers.js';
import { requestTraceOf } from '../trace/request-trace.js';

export interface FailoverPlan {
  readonly roster: ReadonlyMap<string, ModelTable>;
  readonly providers: ReadonlyMap<string, RuntimeProvider>;
  readonly maxAttempts: number;
}

/** How a provider can break a stream after its first event: counted as the endpoint's failure, though the caller got the in-band error. */
const STREAM_BREAKS = new Set(['upstream_stream_timeout', 'upstream_stream_interrupted', 'provider_stream_error']);
/** What a non-streamed attempt passes for hooks: attempt() calls them only for streams. */
const NO_STREAM_HOOKS: StreamHooks = { onCommit: () => {}, onSettled: () => {} };
/** Routing strings are logged at most this long per attempt, so a line with max_attempts attempts stays bounded. */
const MAX_LOGGED_ROUTE_CHARS = 64;
/** Transport failures another endpoint may not have (docs/failover.md); a stream's only before its first event (after it, none is thrown). */
const FAILOVER_CODES = new Set(['upstream_connect_timeout', 'upstream_unreachable', 'upstream_timeout', 'upstream_stream_timeout', 'upstream_stream_interrupted', 'provider_auth_failed']);

/**
 * Serves the request from `routingString`'s route, failing over to its provider's other endpoints, then to each
 * fallback in order: never the same endpoint twice, never an ejected one, at most maxAttempts attempts, and never
 * once the caller has been sent anything. A fallback whose dialect cannot express the request is skipped (logged
 * with its reason); the primary's refusal is the answer. When every endpoint is ejected, the one back soonest is
 * tried anyway. When every attempt fails, the last one's error is the answer.
 */
export async function serveWithFailover(plan: FailoverPlan, request: AttemptRequest, routingString: string, route: ModelTable): Promise<void> {
  const { record } = request;
  const fallback = route.fallback;
  if (fallback.length === 0) {
    const provider = providerOf(plan, route);
    if (provider.ready.length === 1 && plan.maxAttempts >= 1) return serveOnly(request, routingString, route, provider, provider.ready[0]!);
  }
  // Which endpoints were tried, per provider: only needed when a fallback may name the same provider again.
  const tried = fallback.length > 0 ? new Map<string, number>() : undefined;
  let attempts = 0;
  let lastError: unknown;
  let soonest: { name: string; prepared: PreparedCall; provider: RuntimeProvider; endpoint: RuntimeEndpoint } | undefined;
  for (let r = -1; r < fallback.length && attempts < plan.maxAttempts; r++) {
    const name = r < 0 ? routingString : fallback[r]!;
    const target = r < 0 ? route : plan.roster.get(name)!; // the build checked that every fallback is on the roster
    const provider = providerOf(plan, target);
    if (provider.ready.length === 0) {
      if (lastError === undefined) record.provider = provider.id;
      lastError ??= notConfigured(provider);
      continue;
    }
    const prepared = prepareOrSkip(request, r < 0, name, target, provider);
    if (prepared === undefined) continue;
    let triedHere = tried?.get(provider.id) ?? 0;
    for (let endpoint = chooseEndpoint(provider, triedHere); endpoint && attempts < plan.maxAttempts; endpoint = chooseEndpoint(provider, triedHere)) {
      attempts++;
      triedHere |= endpointBit(endpoint);
      const failure = await tryOnce(request, name, provider, endpoint, prepared, endpoint.breaker.admit());
      if (failure === undefined) return;
      lastError = failure;
    }
    tried?.set(provider.id, triedHere);
    if (attempts === 0) {
      // Nothing tried yet, so every endpoint so far is ejected: remember the one back soonest.
      for (const endpoint of provider.ready) if (!soonest || endpoint.breaker.reopensAt < soonest.endpoint.breaker.reopensAt) soonest = { name, prepared, provider, endpoint };
    }
  }
  // Never 503 for everybody because everything is cooling: the endpoint whose cooldown ends first serves.
  if (attempts === 0 && soonest) {
    const failure = await tryOnce(request, soonest.name, soonest.provider, soonest.endpoint, soonest.prepared, 'forced');
    if (failure === undefined) return;
    lastError = failure;
  }
  throw lastError;
}

/**
 * The fast path of a route with one ready endpoint and no fallback: what the loop above does for it, without its
 * bookkeeping. The endpoint is tried once: admitted by its breaker, or forced when ejected (it is the one back soonest).
 */
async function serveOnly(request: AttemptRequest, routingString: string, route: ModelTable, provider: RuntimeProvider, endpoint: RuntimeEndpoint): Promise<void> {
  const prepared = prepareCall(request, route, provider); // the primary's refusal is the answer
  const failure = await tryOnce(request, routingString, provider, endpoint, prepared, endpoint.breaker.mayTry() ? endpoint.breaker.admit() : 'forced');
  if (failure !== undefined) throw failure;
}

/**
 * The route's call, or undefined when a fallback's dialect cannot express the request (docs/failover.md): skipped
 * like an unconfigured provider, logged with its reason, never the answer. The primary's refusal is thrown.
 */
function prepareOrSkip(request: AttemptRequest, primary: boolean, name: string, route: ModelTable, provider: RuntimeProvider): PreparedCall | undefined {
  const startedAt = performance.now();
  try {
    return prepareCall(request, route, provider);
  } catch (error) {
    if (primary || !(error instanceof GatewayError)) throw error;
    logAttempt(request.record, name, provider, undefined, error.body.gateway_code ?? 'error', startedAt);
    return undefined;
  }
}

/**
 * One attempt, its outcome fed to the endpoint's breaker and the log; undefined when served, else the error to fail
 * over from. A stream's verdict is its first event reaching the caller (a probe readmits the endpoint then); a break
 * after it still counts as a failure, and the attempt is logged before the caller's response ends.
 */
async function tryOnce(request: AttemptRequest, name: string, provider: RuntimeProvider, endpoint: RuntimeEndpoint, prepared: PreparedCall, admission: Admission): Promise<unknown> {
  const stopped = request.stoppedWith();
  if (stopped) {
    endpoint.breaker.released(admission);
    throw stopped;
  }
  const { res, record } = request;
  record.provider = provider.id;
  record.price = prepared.price;
  res.setHeader('x-gateway-served-by', servedBy(name, endpoint.name));
  const startedAt = performance.now();
  const traced = requestTraceOf(res)?.startAttempt(name, prepared.upstreamModel, provider, endpoint, request.body);
  let settled = false;
  // Only a stream reports its commit and its end; a whole answer's outcome is known when attempt() returns.
  const hooks: StreamHooks = record.stream
    ? {
        // A probe's (or a forced attempt's) verdict: the endpoint is readmitted now, not when the stream ends.
        onCommit: () => {
          if (admission !== 'closed') endpoint.breaker.succeeded(admission);
        },
        onSettled() {
          settled = true;
          const code = record.gatewayCode;
          const broken = code !== null && STREAM_BREAKS.has(code);
          // Counted as an attempt of a closed breaker: a probe's turn was settled at the commit.
          if (broken) endpoint.breaker.failed('closed');
          else endpoint.breaker.succeeded('closed');
          traced?.end(broken ? code : null);
          logAttempt(record, name, provider, endpoint, code ?? 'ok', startedAt);
        },
      }
    : NO_STREAM_HOOKS;
  try {
    await attempt(request, provider, endpoint, prepared, hooks, traced);
    if (record.stream) {
      if (!settled) hooks.onSettled();
    } else {
      endpoint.breaker.succeeded(admission);
      traced?.end(null);
      logAttempt(record, name, provider, endpoint, 'ok', startedAt);
    }
    return undefined;
  } catch (error) {
    traced?.end(outcomeOf(error), error);
    logAttempt(record, name, provider, endpoint, outcomeOf(error), startedAt);
    const worth = worthFailover(error) && !request.stoppedWith();
    if (worth) endpoint.breaker.failed(admission, rateLimitedFor(error));
    else endpoint.breaker.released(admission);
    if (!worth || res.headersSent) throw error;
    return error;
  }
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

/** A 429's Retry-After (or retry-after-ms) in ms: the breaker ejects the endpoint until then. */
function rateLimitedFor(error: unknown): number | undefined {
  if (!(error instanceof GatewayError) || error.body.provider_status !== 429) return undefined;
  return retryAfterMs(error.headers, Date.now());
}

function providerOf(plan: FailoverPlan, route: ModelTable): RuntimeProvider {
  const provider = plan.providers.get(route.provider);
  if (!provider) throw new Error(`roster names provider "${route.provider}" that the tables lack`); // the build forbids this
  return provider;
}

function outcomeOf(error: unknown): string {
  if (!(error instanceof GatewayError)) return 'internal_error';
  if (error.body.provider_status !== null && error.body.gateway_code !== 'invalid_upstream_response') return String(error.body.provider_status);
  return error.body.gateway_code ?? 'error';
}

/** `endpoint` is undefined for a route skipped before any endpoint was chosen (logged with an empty endpoint). */
function logAttempt(record: RequestRecord, route: string, provider: RuntimeProvider, endpoint: RuntimeEndpoint | undefined, outcome: string, startedAt: number): void {
  const entry = { route: boundedText(route, MAX_LOGGED_ROUTE_CHARS), provider: provider.id, endpoint: endpoint?.name ?? '', outcome, ms: round(performance.now() - startedAt) };
  (record.attempts ??= []).push(entry);
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
