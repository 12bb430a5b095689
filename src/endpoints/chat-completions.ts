import type { Request, Response } from 'express';
import { validateRequest } from '../generated/validate-request.js';
import type { ErrorRuleSet } from '../generated/types/route-tables.js';
import type { AttemptRequest } from '../routing/attempt.js';
import { describeValidationError } from '../caller/describe-validation-error.js';
import { serveWithFailover, type FailoverPlan } from '../routing/failover.js';
import { GatewayError, gatewayError } from '../wire/gateway-error.js';
import type { Lifecycle } from '../caller/lifecycle.js';
import { callerOf } from '../caller/caller-auth.js';
import { lingerAfterEarlyAnswer } from '../caller/linger.js';
import type { CallerPolicy } from '../policy/caller-policy.js';
import type { Admission } from '../policy/limit-store.js';
import { readJsonBody, type BodyLimits, type JsonBody } from '../caller/read-json-body.js';
import { releaseBodyOf } from '../caller/body-budget.js';
import { recordOf } from '../observe/request-log.js';
import { resolveRoute } from '../routing/resolve-route.js';
import { deprecationHeaders } from '../routing/deprecation-headers.js';
import { sendError } from '../caller/send-error.js';
import type { UpstreamCall } from '../routing/upstream.js';
import type { AnswerPlan } from '../routing/answer-writer.js';

/** An inbound wire format other than chat completions: its body as the internal chat request, and where answers go. */
export interface InboundFormat {
  /** Throws the gateway's 400 naming the field it cannot honour. */
  read(body: JsonBody, req: Request): { readonly text: string; readonly value: unknown; readonly answer: AnswerPlan };
  /** The 400s a dialect raises name chat fields: the caller's own name for each, where they differ. */
  readonly paramNames?: Readonly<Record<string, string>>;
}

export interface ChatCompletionsOptions {
  /** The roster, the providers and max_attempts. */
  readonly plan: FailoverPlan;
  readonly errors: ErrorRuleSet;
  readonly body: BodyLimits;
  readonly maxUpstreamBodyBytes: number;
  readonly lifecycle: Lifecycle;
  /** Set for the other inbound formats (/v1/responses, /v1/messages): each is a translation, never a second engine. */
  readonly inbound?: InboundFormat;
  /** Named callers' models, limits and budgets; absent without a callers section. */
  readonly policy?: CallerPolicy;
}

/** POST /v1/chat/completions: validate, resolve on the roster, forward (failing over as routes.yaml allows), translate the answer. */
export function chatCompletionsHandler(options: ChatCompletionsOptions) {
  const { lifecycle, policy } = options;
  return async function chatCompletions(req: Request, res: Response): Promise<void> {
    const record = recordOf(res);
    // A request that arrives during the drain goes elsewhere: the listener stays open only to say so.
    if (lifecycle.draining) throw shuttingDown(null);
    // Until there is a provider call to stop, a drain past its grace answers at once (a caller still sending its body).
    const stopEarly = lifecycle.onForcedStop(() => answerShuttingDown(res));
    res.once('close', stopEarly);
    let read: JsonBody | undefined = await readJsonBody(req, res, options.body);
    if (res.headersSent) return; // answered shutting_down while the body was still coming
    // `let`: a committed stream lets go of the body (forgetBody below); this frame lives as long as the stream.
    let { text, value, answer } = options.inbound ? options.inbound.read(read, req) : { ...read, answer: undefined };
    read = undefined;
    if (!validateRequest(value)) throw describeValidationError(validateRequest.errors ?? []);
    record.model = value.model;
    record.stream = value.stream === true;
    const route = resolveRoute(options.plan.roster, value.model);
    // Set before anything can answer, so errors and streams carry them too.
    const deprecation = deprecationHeaders(route);
    if (deprecation) {
      record.deprecated = true;
      for (const [name, headerValue] of Object.entries(deprecation)) res.setHeader(name, headerValue);
    }
    // Roster first (an off-roster model is a 400 for everybody), then whether this caller may use it.
    const caller = policy ? callerOf(res) : undefined;
    if (caller) policy!.allow(caller, value.model);
    if (lifecycle.forced) throw shuttingDown(route.provider);
    // A caller that leaves, or a drain past its grace period, stops the provider's work (and its bill) at once,
    // and whatever this handler awaits fails with the reason, so it always settles and lets go of the request.
    let call: UpstreamCall | undefined;
    let stoppedWith: GatewayError | undefined;
    const stop = (reason: GatewayError) => {
      stoppedWith ??= reason;
      call?.abort(stoppedWith);
    };
    const onCallerGone = () => {
      if (!res.writableFinished) stop(gatewayError('caller_disconnected', 'The caller closed the connection before the answer was complete.', { provider: record.provider }));
    };
    res.once('close', onCallerGone);
    if (res.closed) onCallerGone();
    stopEarly();
    const stopOnShutdown = lifecycle.onForcedStop(() => stop(shuttingDown(record.provider)));
    const request: AttemptRequest = {
      text,
      body: value,
      res,
      record,
      errors: options.errors,
      maxUpstreamBodyBytes: options.maxUpstreamBodyBytes,
      stopping: () => lifecycle.forced,
      stoppedWith: () => stoppedWith,
      onCall(started) {
        call = started;
        if (stoppedWith) started.abort(stoppedWith);
      },
      ...(answer ? { answer } : {}),
      onCommit: forgetBody,
    };
    // No attempt follows a stream's commit: its body's budget charge goes back and nothing here holds the body.
    function forgetBody(): void {
      releaseBodyOf(res);
      Object.assign(request, { text: '', body: { model: request.body.model, messages: [] } });
      text = '';
      value = undefined;
    }
    let admission: Admission | undefined;
    try {
      // Over a limit: 429 at once, nothing sent upstream. Admitted: settled below when the answer ends, on every path.
      if (caller) admission = await policy!.admit(caller, res);
      if (stoppedWith) throw stoppedWith;
      await serveWithFailover(options.plan, request, value.model, route);
    } catch (error) {
      if (stoppedWith) throw stoppedWith;
      if (lifecycle.forced) throw shuttingDown(record.provider);
      throw options.inbound?.paramNames ? renamedParam(error, options.inbound.paramNames) : error;
    } finally {
      if (admission) policy!.settle(admission, record);
      res.off('close', onCallerGone);
      stopOnShutdown();
    }
  };
}

/** A dialect's 400 naming a chat field, naming the caller's field instead. */
function renamedParam(error: unknown, names: Readonly<Record<string, string>>): unknown {
  if (!(error instanceof GatewayError) || error.body.param === null) return error;
  const chatParam = error.body.param;
  const head = Object.keys(names).find((name) => chatParam === name || chatParam.startsWith(`${name}.`));
  if (head === undefined) return error;
  const param = names[head]! + chatParam.slice(head.length);
  return new GatewayError(error.status, error.retry, { ...error.body, param }, error.headers);
}

function shuttingDown(providerId: string | null) {
  return gatewayError('shutting_down', 'The gateway is shutting down; send the request again.', { provider: providerId });
}

/** Before the provider is known: the rest of the body is not read, so the connection closes after the answer. */
function answerShuttingDown(res: Response): void {
  if (res.headersSent) return;
  recordOf(res).gatewayCode = 'shutting_down';
  res.setHeader('connection', 'close');
  lingerAfterEarlyAnswer(res.req);
  sendError(res, shuttingDown(null));
}
