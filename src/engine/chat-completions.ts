import type { Request, Response } from 'express';
import { validateRequest } from '../generated/validate-request.js';
import type { ErrorRuleSet, ModelTable } from '../generated/types/route-tables.js';
import { describeValidationError } from './describe-validation-error.js';
import { gatewayError } from './gateway-error.js';
import type { Lifecycle } from './lifecycle.js';
import { findErrorRule, providerError } from './provider-error.js';
import { readJsonBody, type BodyLimits } from './read-json-body.js';
import { readLimited } from './read-limited.js';
import { isEventStream, relayStream } from './relay-stream.js';
import { recordOf, round } from './request-log.js';
import { resolveRoute } from './resolve-route.js';
import { sendError } from './send-error.js';
import type { RuntimeProvider } from './runtime-providers.js';
import { callUpstream, upstreamFailure, type UpstreamReply } from './upstream.js';

export interface ChatCompletionsOptions {
  readonly roster: ReadonlyMap<string, ModelTable>;
  readonly providers: ReadonlyMap<string, RuntimeProvider>;
  readonly errors: ErrorRuleSet;
  readonly body: BodyLimits;
  readonly maxUpstreamBodyBytes: number;
  readonly lifecycle: Lifecycle;
}

/** Provider error bodies are small; more than this is not read. */
const MAX_PROVIDER_ERROR_BYTES = 64 * 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** POST /v1/chat/completions: validate, resolve on the roster, forward, translate the answer. */
export function chatCompletionsHandler(options: ChatCompletionsOptions) {
  const { lifecycle } = options;
  return async function chatCompletions(req: Request, res: Response): Promise<void> {
    const record = recordOf(res);
    // Until there is a provider call to stop, a drain past its grace answers at once (a caller still sending its body).
    const stopEarly = lifecycle.onForcedStop(() => answerShuttingDown(res));
    res.once('close', stopEarly);
    const { text, value } = await readJsonBody(req, res, options.body);
    if (res.headersSent) return; // answered shutting_down while the body was still coming
    if (!validateRequest(value)) throw describeValidationError(validateRequest.errors ?? []);
    record.model = value.model;
    record.stream = value.stream === true;
    const route = resolveRoute(options.roster, value.model);
    const provider = options.providers.get(route.provider);
    if (!provider) throw new Error(`roster names provider "${route.provider}" that the tables lack`); // the build forbids this
    record.provider = provider.id;
    if (provider.missingKeyEnv) {
      throw gatewayError('provider_not_configured', `The provider "${provider.id}" is not configured: set ${provider.missingKeyEnv} on the gateway.`, {
        provider: provider.id,
      });
    }
    // To count tokens of streams, ask for usage even when the caller did not (unless routes.yaml says the provider refuses).
    const hideUsage = record.stream && provider.table.streamUsage && value.stream_options?.include_usage !== true;
    const outgoing = provider.dialect.buildRequest({
      text,
      body: value,
      upstreamModel: route.upstreamModel,
      maxOutputTokens: route.maxOutputTokens,
      reasoning: route.reasoning,
      requestStreamUsage: hideUsage,
    });
    if (lifecycle.forced) throw shuttingDown(provider.id);
    const sentAt = performance.now();
    const call = callUpstream(provider, outgoing, record.requestId, record.stream);
    // A caller that leaves, or a drain past its grace period, stops the provider's work (and its bill) at once,
    // and whatever this handler awaits fails with the reason, so it always settles and lets go of the request.
    const onCallerGone = () => {
      if (!res.writableFinished) call.abort(gatewayError('caller_disconnected', 'The caller closed the connection before the answer was complete.', { provider: provider.id }));
    };
    res.once('close', onCallerGone);
    if (res.closed) onCallerGone();
    stopEarly();
    const stopOnShutdown = lifecycle.onForcedStop(() => call.abort(shuttingDown(provider.id)));
    try {
      const reply = await call.reply;
      record.upstreamHeadersMs = round(performance.now() - sentAt);
      if (reply.status < 200 || reply.status >= 300) throw await readProviderError(provider, reply, options.errors);
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
          routingModel: value.model,
          hideUsage,
          includeUsage: value.stream_options?.include_usage === true,
          maxEventChars: options.maxUpstreamBodyBytes,
          stopping: () => lifecycle.forced,
          record,
        });
        return;
      }
      const answer = await readUpstreamBody(provider, reply, options.maxUpstreamBodyBytes);
      const translated = answer === undefined ? undefined : provider.dialect.readResponse(answer, value.model);
      if (!translated) {
        throw gatewayError('invalid_upstream_response', `The provider "${provider.id}" answered HTTP ${reply.status} with a body that is not a chat completion.`, {
          provider: provider.id,
          providerStatus: reply.status,
        });
      }
      record.usage = translated.usage;
      const answerText = provider.redact(translated.text);
      res.status(reply.status);
      res.setHeader('content-type', 'application/json');
      res.setHeader('content-length', Buffer.byteLength(answerText));
      res.end(answerText);
    } catch (error) {
      if (call.abortedWith) throw call.abortedWith;
      if (lifecycle.forced) throw shuttingDown(provider.id);
      throw error;
    } finally {
      res.off('close', onCallerGone);
      stopOnShutdown();
    }
  };
}

function shuttingDown(providerId: string | null) {
  return gatewayError('shutting_down', 'The gateway is shutting down; send the request again.', { provider: providerId });
}

/** Before the provider is known: the rest of the body is not read, so the connection closes after the answer. */
function answerShuttingDown(res: Response): void {
  if (res.headersSent) return;
  recordOf(res).gatewayCode = 'shutting_down';
  res.setHeader('connection', 'close');
  sendError(res, shuttingDown(null));
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
