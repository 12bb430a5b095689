import type { Response } from 'express';
import type { ChatCompletionRequest } from '../generated/types/chat-completion-request.js';
import type { ErrorRuleSet, ModelTable } from '../generated/types/route-tables.js';
import { gatewayError, type GatewayError } from '../wire/gateway-error.js';
import { findErrorRule, providerError } from '../wire/provider-error.js';
import { readLimited } from './read-limited.js';
import { isEventStream, relayStream } from './relay-stream.js';
import { round, type RequestRecord } from '../observe/request-log.js';
import type { RuntimeEndpoint, RuntimeProvider } from './runtime-providers.js';
import { callUpstream, upstreamFailure, type UpstreamCall, type UpstreamReply } from './upstream.js';
import type { AttemptTrace } from '../trace/request-trace.js';

/** What every attempt of one request shares: the caller's body as read, and where the answer goes. */
export interface AttemptRequest {
  readonly text: string;
  readonly body: ChatCompletionRequest;
  readonly res: Response;
  readonly record: RequestRecord;
  readonly errors: ErrorRuleSet;
  readonly maxUpstreamBodyBytes: number;
  readonly stopping: () => boolean;
  /** Set when the caller left or a drain ran out of grace: no further attempt. */
  readonly stoppedWith: () => GatewayError | undefined;
  /** Told of each call as it starts, so a caller leaving or a drain can abort it. */
  readonly onCall: (call: UpstreamCall) => void;
}

/** Provider error bodies are small; more than this is not read. */
const MAX_PROVIDER_ERROR_BYTES = 64 * 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * One upstream call for `route` at `endpoint` (with the attempt's traceparent when traced), answered to the caller when it succeeds. Throws the gateway's
 * error when it fails; the caller has been sent nothing then unless the failure came mid-stream (res.headersSent).
 */
export async function attempt(request: AttemptRequest, route: ModelTable, provider: RuntimeProvider, endpoint: RuntimeEndpoint, traced?: AttemptTrace): Promise<void> {
  const { body, res, record } = request;
  // To count tokens of streams, ask for usage even when the caller did not (unless routes.yaml says the provider refuses).
  const hideUsage = record.stream && provider.table.streamUsage && body.stream_options?.include_usage !== true;
  const outgoing = provider.dialect.buildRequest({
    text: request.text,
    body,
    upstreamModel: route.upstreamModel,
    maxOutputTokens: route.maxOutputTokens,
    reasoning: route.reasoning,
    requestStreamUsage: hideUsage,
  });
  const sentAt = performance.now();
  const call = callUpstream(provider, endpoint, outgoing, record.requestId, record.stream, traced?.headers);
  request.onCall(call);
  try {
    const reply = await call.reply;
    record.upstreamHeadersMs = round(performance.now() - sentAt);
    if (reply.status < 200 || reply.status >= 300) throw await readProviderError(provider, reply, request.errors);
    if (record.stream) {
      if (!isEventStream(reply)) {
        reply.body.destroy();
        throw gatewayError('invalid_upstream_response', `The provider "${provider.id}" answered a streamed request with ${String(reply.headers['content-type']).slice(0, 60)}, not an event stream.`, {
          provider: provider.id,
          providerStatus: reply.status,
        });
      }
      await relayStream({
        provider,
        reply,
        res,
        routingModel: body.model,
        hideUsage,
        includeUsage: body.stream_options?.include_usage === true,
        maxEventChars: request.maxUpstreamBodyBytes,
        stopping: request.stopping,
        record,
      });
      return;
    }
    const answer = await readUpstreamBody(provider, reply, request.maxUpstreamBodyBytes);
    const translated = answer === undefined ? undefined : provider.dialect.readResponse(answer, body.model);
    if (!translated) {
      throw gatewayError('invalid_upstream_response', `The provider "${provider.id}" answered HTTP ${reply.status} with a body that is not a chat completion.`, {
        provider: provider.id,
        providerStatus: reply.status,
      });
    }
    record.usage = translated.usage;
    traced?.answered(translated.described);
    const answerText = provider.redact(translated.text);
    res.status(reply.status);
    res.setHeader('content-type', 'application/json');
    res.setHeader('content-length', Buffer.byteLength(answerText));
    res.end(answerText);
  } catch (error) {
    throw call.abortedWith ?? error;
  }
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
  return providerError(provider.id, reply.status, reply.headers, provider.dialect.readError(text), rule);
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
