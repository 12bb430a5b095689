import type { ChatCompletionRequest } from '../generated/types/chat-completion-request.js';
import type { Usage } from '../generated/types/usage.js';
import type { ProviderErrorDetails } from '../engine/provider-error.js';
import type { SseMessage } from '../engine/sse-parser.js';

/** The caller's request as the engine hands it to a dialect. */
export interface OutgoingCall {
  /** The body exactly as the caller sent it. */
  readonly text: string;
  /** The same body, parsed and checked against the request schema. */
  readonly body: ChatCompletionRequest;
  readonly upstreamModel: string;
  /** Ask the provider to report usage in the stream although the caller did not (the gateway counts tokens). */
  readonly requestStreamUsage: boolean;
}

/** A non-streamed answer translated for the caller. */
export interface TranslatedResponse {
  /** OpenAI chat.completion JSON with `model` set to the caller's routing string. */
  readonly text: string;
  readonly usage: Usage | null;
}

/** What to send the caller for one upstream stream message. */
export interface StreamStep {
  /** SSE text to write now; may be empty. */
  readonly frames: string;
  /** Set when this message ends the stream: `done` after the provider's end marker, `error` after an error event. */
  readonly end?: 'done' | 'error';
  /** Token counts when this message carried them. */
  readonly usage?: Usage;
}

/** Per-request state for translating one upstream stream. */
export interface StreamTranslator {
  translate(message: SseMessage): StreamStep;
}

/** What a stream translator needs to know about the request. */
export interface StreamContext {
  readonly routingModel: string;
  readonly providerId: string;
  /** The gateway asked for usage the caller did not: the caller must not see it. */
  readonly hideUsage: boolean;
  /** The caller asked for `stream_options.include_usage`: a dialect that builds its own chunks sends the usage chunk. */
  readonly includeUsage: boolean;
}

/**
 * How the engine talks to one kind of provider. The engine knows where (routes.yaml) and when
 * (timeouts, errors); a dialect knows only what goes on the wire.
 */
export interface Dialect {
  /** Appended to the provider's base_url. */
  readonly chatPath: string;
  /** Body to send upstream. */
  buildRequestBody(call: OutgoingCall): string;
  /** Reads a 2xx body; undefined when it is not a usable answer (the engine answers 502). */
  readResponse(text: string, routingModel: string): TranslatedResponse | undefined;
  /** Reads a non-2xx body for the provider's own message and code; never throws. */
  readError(text: string): ProviderErrorDetails;
  /** A translator for one streamed answer (the upstream's text/event-stream, already parsed into messages). */
  createStreamTranslator(context: StreamContext): StreamTranslator;
}
