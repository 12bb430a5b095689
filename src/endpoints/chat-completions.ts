import type { Request, Response } from 'express';
import { validateRequest } from '../generated/validate-request.js';
import type { ErrorRuleSet } from '../generated/types/route-tables.js';
import type { ChatCompletionRequest } from '../generated/types/chat-completion-request.js';
import type { AttemptRequest } from '../routing/attempt.js';
import { describeValidationError } from '../caller/describe-validation-error.js';
import { serveWithFailover, type FailoverPlan } from '../routing/failover.js';
import { gatewayError, type GatewayError } from '../wire/gateway-error.js';
import type { ForcedStop, Lifecycle } from '../caller/lifecycle.js';
import { callerOf } from '../caller/caller-auth.js';
import { upstreamViaOf } from '../caller/loop-guard.js';
import { lingerAfterEarlyAnswer, type LingerBounds } from '../caller/linger.js';
import type { CallerPolicy } from '../policy/caller-policy.js';
import type { Admission, Reservation } from '../policy/limit-store.js';
import { reservationFor } from '../policy/reservation.js';
import { readJsonBody, type BodyLimits, type JsonBody } from '../caller/read-json-body.js';
import type { BodyReservation } from '../caller/body-budget.js';
import { holdLine, recordOf, releaseLine, type RequestRecord } from '../observe/request-log.js';
import { refuseOtherKind, resolveRoute } from '../routing/resolve-route.js';
import type { ModelKind } from '../dialects/dialect.js';
import { deprecationHeaders } from '../routing/deprecation-headers.js';
import { sendError } from '../caller/send-error.js';
import type { UpstreamCall } from '../routing/upstream.js';
import type { AnswerPlan } from '../routing/answer-writer.js';
import type { StreamsInFlight } from '../dialects/stream-budget.js';

/** An inbound wire format other than chat completions: its body as the internal chat request, and where answers go. */
export interface InboundFormat {
  /** Throws the gateway's 400 naming the field it cannot honour. */
  read(body: JsonBody, req: Request): { readonly text: string; readonly value: unknown; readonly answer: AnswerPlan };
  /** The kind of model the format serves (routes.yaml `kind`); absent: chat. */
  readonly kind?: ModelKind;
}

export interface ChatCompletionsOptions {
  /** The roster, the providers and max_attempts. */
  readonly plan: FailoverPlan;
  readonly errors: ErrorRuleSet;
  readonly body: BodyLimits;
  readonly maxUpstreamBodyBytes: number;
  /** What all streams may hold at once (MAX_STREAM_BYTES_IN_FLIGHT). */
  readonly streams: StreamsInFlight;
  readonly lifecycle: Lifecycle;
  /** How long an early-answered caller's body is read before the socket is cut (linger.ts). */
  readonly linger: LingerBounds;
  /** Set for the other inbound formats (/v1/responses, /v1/messages): each is a translation, never a second engine. */
  readonly inbound?: InboundFormat;
  /** Named callers' models, limits and budgets; absent without a callers section. */
  readonly policy?: CallerPolicy;
  /** This gateway's own Via entry (`1.1 <gateway id>`), sent upstream after what the request arrived with. */
  readonly ownVia: string;
}

/** POST /v1/chat/completions: validate, resolve on the roster, forward (failing over as routes.yaml allows), translate the answer. */
export function chatCompletionsHandler(options: ChatCompletionsOptions) {
  const { lifecycle, policy } = options;
  const stopping = () => lifecycle.forced;
  return async function chatCompletions(req: Request, res: Response): Promise<void> {
    const record = recordOf(res);
    // A request that arrives during the drain goes elsewhere: the listener stays open only to say so.
    if (lifecycle.draining) throw shuttingDown(null);
    // Until there is a provider call to stop, a drain past its grace answers at once (a caller still sending its body).
    const exchange = new Exchange(res, record, options, stopping);
    lifecycle.onForcedStop(exchange);
    let admission: Admission | undefined;
    try {
      // `let`s: this frame lives as long as the answer, and a committed stream lets go of the body (Exchange.onCommit).
      let read: JsonBody | undefined = await readJsonBody(req, res, options.body);
      if (res.headersSent) return; // answered shutting_down while the body was still coming
      let translated = options.inbound?.read(read, req);
      let { text, value } = translated ?? read;
      const { reservation } = read;
      read = undefined;
      if (!validateRequest(value)) {
        const invalid = describeValidationError(validateRequest.errors ?? []);
        throw translated?.answer.paths ? translated.answer.paths.named(invalid) : invalid;
      }
      record.model = value.model;
      record.stream = value.stream === true;
      const route = resolveRoute(options.plan.roster, value.model);
      // Set before anything can answer, so errors and streams carry them too.
      const deprecation = deprecationHeaders(route);
      if (deprecation) {
        record.deprecated = true;
        for (const [name, headerValue] of Object.entries(deprecation)) res.setHeader(name, headerValue);
      }
      // Roster first (an off-roster model is a 400 for everybody), then its kind, then whether this caller may use it.
      refuseOtherKind(route, value.model, options.inbound?.kind ?? 'chat');
      const caller = policy ? callerOf(res) : undefined;
      if (caller) policy!.allow(caller, value.model);
      if (lifecycle.forced) throw shuttingDown(route.provider);
      // A caller that leaves, or a drain past its grace period, stops the provider's work (and its bill) at once,
      // and whatever this handler awaits fails with the reason, so it always settles and lets go of the request.
      exchange.begin(text, value, translated?.answer, reservation);
      const model = value.model;
      // Read before the body is let go: what the request may cost, held back from its caller's limits until it ends.
      const reserve: Reservation | undefined = caller ? reservationFor(value, text.length, route) : undefined;
      translated = undefined;
      text = '';
      value = undefined;
      try {
        // Over a limit: 429 at once, nothing sent upstream. Admitted: settled below when the answer ends, on every path.
        if (caller) admission = await policy!.admit(caller, res, reserve!);
        const stopped = exchange.stoppedWith();
        if (stopped) throw stopped;
        await serveWithFailover(options.plan, exchange, model, route);
      } catch (error) {
        const stopped = exchange.stoppedWith();
        if (stopped) throw stopped;
        if (lifecycle.forced) throw shuttingDown(record.provider);
        throw error;
      }
    } finally {
      if (admission) policy!.settle(admission, record);
      exchange.end();
      lifecycle.offForcedStop(exchange);
    }
  };
}

/**
 * One request on its way through the engine (the AttemptRequest every attempt shares), and what stops it: a
 * forced drain (answered at once while the body is still coming, the provider call stopped after), or the caller
 * leaving while it is answered. State in fields and one shared 'close' listener, rather than closures per request.
 */
class Exchange implements AttemptRequest, ForcedStop {
  text = '';
  body!: ChatCompletionRequest;
  answer?: AnswerPlan;
  readonly errors: ErrorRuleSet;
  readonly maxUpstreamBodyBytes: number;
  readonly streams: StreamsInFlight;
  readonly via: string;
  readonly #lifecycle: Lifecycle;
  readonly #linger: LingerBounds;
  #call: UpstreamCall | undefined;
  #stopped: GatewayError | undefined;
  /** Past the body: a forced stop stops the provider's work rather than answering at once. */
  #begun = false;
  /** A stream's first event went out: the caller leaving no longer stops the provider call (the relay reads its usage). */
  #committed = false;
  /** The body's charge to MAX_BODY_BYTES_IN_FLIGHT, given back at the commit (or when the response closes). */
  #reservation: BodyReservation | undefined;

  constructor(
    readonly res: Response,
    readonly record: RequestRecord,
    options: ChatCompletionsOptions,
    readonly stopping: () => boolean,
  ) {
    this.errors = options.errors;
    this.maxUpstreamBodyBytes = options.maxUpstreamBodyBytes;
    this.streams = options.streams;
    this.via = upstreamViaOf(res, options.ownVia);
    this.#lifecycle = options.lifecycle;
    this.#linger = options.linger;
  }

  /** The body is read: from now on the caller leaving stops the request. */
  begin(text: string, body: ChatCompletionRequest, answer: AnswerPlan | undefined, reservation: BodyReservation): void {
    this.#reservation = reservation;
    this.text = text;
    this.body = body;
    if (answer) this.answer = answer;
    this.#begun = true;
    // Until the handler settles, the log line and the drain wait for it, though the caller may have left (a stream
    // reading the provider's usage after that, an attempt still to be logged).
    holdLine(this.record);
    this.#lifecycle.hold();
    this.res.locals['exchange'] = this;
    this.res.on('close', callerGone);
    if (this.res.closed) this.callerGone();
  }

  /**
   * A stream committed (its first event went out): no attempt follows, so the body's MAX_BODY_BYTES_IN_FLIGHT
   * charge goes back but for what the answer's writers keep of the request (the Responses echo), and nothing here
   * holds the body; an open stream then holds its answer, not its prompt.
   */
  onCommit(): void {
    this.#committed = true;
    this.#reservation?.keep(this.answer?.keeps ?? 0);
    this.text = '';
    this.body = { model: this.body.model, messages: [] } as unknown as ChatCompletionRequest;
    const native = this.answer?.native;
    if (native) this.answer = { ...this.answer!, native: { ...native, call: { ...native.call, text: '' } } };
    // No 400 about the request can follow a committed stream: where its paths came from is not needed.
    if (this.answer?.paths) {
      const { paths: _unneeded, ...answer } = this.answer;
      this.answer = answer;
    }
  }

  /** The handler settled: the caller leaving no longer concerns it, and its log line may be written. */
  end(): void {
    if (!this.#begun) return;
    this.res.off('close', callerGone);
    this.res.locals['exchange'] = undefined;
    releaseLine(this.record);
    this.#lifecycle.release();
  }

  stoppedWith(): GatewayError | undefined {
    return this.#stopped;
  }

  onCall(started: UpstreamCall): void {
    this.#call = started;
    if (this.#stopped) started.abort(this.#stopped);
  }

  forceStop(): void {
    if (this.#begun) this.#stop(shuttingDown(this.record.provider));
    else answerShuttingDown(this.res, this.#linger);
  }

  callerGone(): void {
    if (this.res.writableFinished) return;
    const reason = gatewayError('caller_disconnected', 'The caller closed the connection before the answer was complete.', { provider: this.record.provider });
    // A committed stream goes on reading, for a bounded while, what the provider still sends (its usage): the relay
    // sees the caller leave and ends the call itself. No further attempt either way.
    if (this.#committed) this.#stopped ??= reason;
    else this.#stop(reason);
  }

  #stop(reason: GatewayError): void {
    this.#stopped ??= reason;
    this.#call?.abort(this.#stopped);
  }
}

/** The one 'close' listener every exchange shares: a listener is called with the response as `this`. */
function callerGone(this: Response): void {
  (this.locals['exchange'] as Exchange | undefined)?.callerGone();
}

function shuttingDown(providerId: string | null) {
  return gatewayError('shutting_down', 'The gateway is shutting down; send the request again.', { provider: providerId });
}

/** Before the provider is known: the rest of the body is not read, so the connection closes after the answer. */
function answerShuttingDown(res: Response, linger: LingerBounds): void {
  if (res.headersSent) return;
  recordOf(res).gatewayCode = 'shutting_down';
  res.setHeader('connection', 'close');
  lingerAfterEarlyAnswer(res.req, linger);
  sendError(res, shuttingDown(null));
}
