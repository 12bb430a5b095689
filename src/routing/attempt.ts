import type { Response } from 'express';
import type { ChatCompletionRequest } from '../generated/types/chat-completion-request.js';
import type { ErrorRuleSet, ModelTable } from '../generated/types/route-tables.js';
import { gatewayError, type GatewayError } from '../wire/gateway-error.js';
import { scanTopLevel } from '../wire/json-top-level.js';
import { editTopLevel } from '../wire/json-top-level-edit.js';
import { findErrorRule, providerError } from '../wire/provider-error.js';
import { readLimited } from './read-limited.js';
import { isEventStream } from './stream/relay-options.js';
import { relayStream } from './stream/relay-stream.js';
import { CHAT_ANSWER, type AnswerPlan, type AnswerWriter } from './answer-writer.js';
import type { AnswerDescription, OutgoingRequest, StreamReaderContext, StreamReader, TranslatedResponse } from '../dialects/dialect.js';
import { round, type RequestRecord } from '../observe/request-log.js';
import { answerTextChars, estimatedUsage } from '../observe/usage-estimate.js';
import type { RuntimeEndpoint, RuntimeProvider } from './runtime-providers.js';
import { withProviderToken } from './auth/provider-token.js';
import { awsSignature } from './auth/aws-call.js';
import { callUpstream, upstreamFailure, type UpstreamCall, type UpstreamReply } from './upstream.js';
import type { AttemptTrace } from '../trace/request-trace.js';
import { forgetSentBody } from './forget-body.js';
import type { StreamsInFlight } from '../dialects/stream-budget.js';

/** What every attempt of one request shares: the caller's body as read, and where the answer goes. */
export interface AttemptRequest {
  readonly text: string;
  readonly body: ChatCompletionRequest;
  readonly res: Response;
  readonly record: RequestRecord;
  readonly errors: ErrorRuleSet;
  readonly maxUpstreamBodyBytes: number;
  /** What all streams may hold at once (MAX_STREAM_BYTES_IN_FLIGHT): each stream's account is opened on it. */
  readonly streams: StreamsInFlight;
  /** The Via header of every upstream call: what the request arrived with, then this gateway (loop detection). */
  readonly via: string;
  readonly stopping: () => boolean;
  /** Set when the caller left or a drain ran out of grace: no further attempt. */
  readonly stoppedWith: () => GatewayError | undefined;
  /** Told of each call as it starts, so a caller leaving or a drain can abort it. */
  readonly onCall: (call: UpstreamCall) => void;
  /** Where answers go when the caller did not call /v1/chat/completions; absent: OpenAI chat bytes. */
  readonly answer?: AnswerPlan;
  /** Told when a stream commits: no attempt follows, so whatever holds the caller's body lets go of it (docs/environment.md). */
  readonly onCommit?: () => void;
}

/** Provider error bodies are small; more than this is not read. */
const MAX_PROVIDER_ERROR_BYTES = 64 * 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * What one route's call sends and how its answer is read, built once per route: the same for each of its
 * provider's endpoints. The caller's body goes natively when the dialect takes its format, else in the internal
 * chat form.
 */
export interface PreparedCall {
  readonly outgoing: OutgoingRequest;
  readonly readResponse: (text: string, routingModel: string) => TranslatedResponse | undefined;
  readonly createReader: (context: StreamReaderContext) => StreamReader;
  readonly writer: AnswerWriter;
  /** The gateway asks for stream usage the caller did not: the caller must not see it. */
  readonly hideUsage: boolean;
  /** routes.yaml price of the route's model: what its answer costs (docs/callers.md). */
  readonly price: ModelTable['price'];
  /** The model the provider is asked for (traces name it). */
  readonly upstreamModel: string;
}

/** Told how a stream that reached the caller goes (docs/failover.md): its commit, then its outcome in record.gatewayCode. */
export interface StreamHooks {
  readonly onCommit: () => void;
  readonly onSettled: () => void;
}

/** The call for `route`; throws the gateway's 400 when the route's dialect cannot express the request. */
export function prepareCall(request: AttemptRequest, route: ModelTable, provider: RuntimeProvider): PreparedCall {
  const { body, record } = request;
  // To count tokens of streams, ask for usage even when the caller did not (unless routes.yaml says the provider refuses).
  const hideUsage = record.stream && provider.table.streamUsage && body.stream_options?.include_usage !== true;
  return { ...wayOf(request, route, provider, hideUsage), price: route.price, upstreamModel: route.upstreamModel };
}

/**
 * One upstream call of `prepared` at `endpoint` (with the attempt's traceparent when traced), answered to the caller when it succeeds. Throws the gateway's
 * error when it fails; the caller has been sent nothing then (a stream that failed after its first event ends
 * with an error event and returns).
 */
export async function attempt(request: AttemptRequest, provider: RuntimeProvider, endpoint: RuntimeEndpoint, way: PreparedCall, hooks: StreamHooks, traced?: AttemptTrace): Promise<void> {
  // The body is read through `request`, never kept in this frame: a committed stream lets go of it (forget-body.ts).
  const { res, record } = request;
  const { hideUsage } = way;
  const promptChars = way.outgoing.body.length;
  const sentAt = performance.now();
  const signature = provider.aws ? await awsSignature(provider.id, provider.aws, endpoint.baseUrl, way.outgoing) : undefined;
  // Signing awaited: the caller may have gone (or a drain run out) meanwhile, and nobody would abort this call.
  const stopped = signature ? request.stoppedWith() : undefined;
  if (stopped) throw stopped;
  // The signature goes with the call's own headers (the trace context's), so no copy of the request holds its body.
  const callHeaders = signature ? { ...traced?.headers, ...signature } : traced?.headers;
  const call = callUpstream(provider, endpoint, withProviderToken(provider.id, provider.tokens, way.outgoing), record.requestId, request.via, record.stream, callHeaders);
  request.onCall(call);
  try {
    const reply = await call.reply;
    record.upstreamHeadersMs = round(performance.now() - sentAt);
    if (reply.status < 200 || reply.status >= 300) throw await readProviderError(provider, reply, request.errors);
    if (record.stream) {
      if (!isEventStream(reply, provider.dialect.streamContentType)) {
        reply.body.destroy();
        throw gatewayError('invalid_upstream_response', `The provider "${provider.id}" answered a streamed request with ${String(reply.headers['content-type']).slice(0, 60)}, not ${provider.dialect.streamContentType ?? 'an event stream'}.`, {
          provider: provider.id,
          providerStatus: reply.status,
        });
      }
      // What the stream holds counts against MAX_STREAM_BYTES_IN_FLIGHT until it ends, however it ends.
      const holdings = request.streams.open();
      try {
        await relayStream({
          provider,
          reply,
          res,
          routingModel: request.body.model,
          hideUsage,
          includeUsage: request.body.stream_options?.include_usage === true,
          maxEventChars: request.maxUpstreamBodyBytes,
          holdings,
          errors: request.errors,
          stopping: request.stopping,
          record,
          createReader: way.createReader,
          output: way.writer.stream(holdings),
          onCommit() {
            hooks.onCommit();
            forgetSentBody(way.outgoing, reply.body);
            request.onCommit?.();
          },
          onSettled: hooks.onSettled,
          promptChars,
          ...(traced ? { onDescribed: (described: AnswerDescription) => traced.answered(described) } : {}),
        });
      } finally {
        holdings.release();
      }
      return;
    }
    const answer = await readUpstreamBody(provider, reply, request.maxUpstreamBodyBytes);
    const translated = answer === undefined ? undefined : way.readResponse(answer, request.body.model);
    if (!translated) {
      throw gatewayError('invalid_upstream_response', `The provider "${provider.id}" answered HTTP ${reply.status} with a body that is not a usable answer (a chat completion, or what the endpoint asked for).`, {
        provider: provider.id,
        providerStatus: reply.status,
      });
    }
    // Every answer is charged: the provider's usage, else an estimate (docs/callers.md).
    record.usageEstimated = !translated.usage;
    record.usage = translated.usage ?? estimatedUsage(promptChars, answerTextChars(translated.text));
    traced?.answered(translated.described);
    way.writer.whole(res, reply.status, provider.redact(translated.text));
  } catch (error) {
    throw call.abortedWith ?? error;
  }
}

function wayOf(request: AttemptRequest, route: ModelTable, provider: RuntimeProvider, hideUsage: boolean): Omit<PreparedCall, 'price' | 'upstreamModel'> {
  const { answer, body } = request;
  const native = answer?.native;
  const nativeDialect = native ? provider.dialect.native?.(native.call.format, route) : undefined;
  if (native && nativeDialect) {
    const outgoing = nativeDialect.buildRequest(native.call, route.upstreamModel);
    return {
      outgoing,
      readResponse: outgoing.readResponse ?? ((text, model) => nativeDialect.readResponse(text, model)),
      createReader: (context) => nativeDialect.createStreamReader(context),
      writer: native.writer,
      hideUsage,
    };
  }
  const chat = answer ? answer.chat : CHAT_ANSWER;
  if ('refusal' in chat) throw chat.refusal;
  const { dialect } = provider;
  // No closure over the request here: V8 keeps the variables any closure of this frame captures in one context,
  // which readResponse and createReader below keep alive for the whole stream (a 14 MiB request with them).
  let outgoing: ReturnType<typeof dialect.buildRequest>;
  try {
    outgoing = dialect.buildRequest({
      text: answer && !provider.table.streamUsage ? withoutStreamOptions(request.text) : request.text,
      body,
      upstreamModel: route.upstreamModel,
      maxOutputTokens: route.maxOutputTokens,
      reasoning: route.reasoning,
      thinkingBudget: route.thinkingBudget,
      reasoningLevels: route.reasoningLevels,
      requestStreamUsage: hideUsage,
      allowedFields: route.allowFields,
    });
  } catch (error) {
    // A dialect's 400 about the chat form a translation made names the caller's own field (`input[1].arguments`).
    throw answer?.paths ? answer.paths.named(error) : error;
  }
  return {
    outgoing,
    readResponse: (text, model) => dialect.readResponse(text, model),
    createReader: (context) => dialect.createStreamReader(context),
    writer: chat,
    hideUsage,
  };
}

/**
 * An inbound format's chat request asks for stream usage (its terminal event carries it); a provider whose
 * routes.yaml says it refuses stream_options gets none, and that stream's answer has no usage.
 */
function withoutStreamOptions(text: string): string {
  const scan = scanTopLevel(text);
  return scan ? editTopLevel(text, scan, new Map([['stream_options', undefined]])) : text;
}

async function readProviderError(provider: RuntimeProvider, reply: UpstreamReply, errors: ErrorRuleSet) {
  let text = '';
  try {
    const { bytes, truncated } = await readLimited(reply.body, MAX_PROVIDER_ERROR_BYTES);
    if (truncated) reply.body.destroy();
    text = bytes.toString('utf8');
  } catch {
    // A body that breaks off still leaves the status, which is what the mapping needs.
  }
  const rule = findErrorRule(provider.table.errors, errors, reply.status);
  return providerError(provider.id, reply.status, reply.headers, provider.dialect.readError(text, reply.headers), rule);
}

/** The whole 2xx body as text; undefined when it is too large or not UTF-8. */
async function readUpstreamBody(provider: RuntimeProvider, reply: UpstreamReply, maxBytes: number): Promise<string | undefined> {
  let result: { bytes: Buffer; truncated: boolean };
  try {
    result = await readLimited(reply.body, maxBytes);
  } catch (error) {
    throw upstreamFailure(provider, error as Error);
  }
  if (result.truncated) {
    reply.body.destroy();
    return undefined;
  }
  try {
    return utf8.decode(result.bytes);
  } catch {
    return undefined;
  }
}
