import type { IncomingHttpHeaders } from 'node:http';
import type { ChatCompletionRequest } from '../generated/types/chat-completion-request.js';
import type { Usage } from '../generated/types/usage.js';
import type { ProviderErrorDetails } from '../wire/provider-error.js';
import type { ModelTable, ReasoningMode, ThinkingBudget } from '../generated/types/route-tables.js';
import type { SseMessage } from '../wire/sse-parser.js';
import type { StreamHoldings } from './stream-budget.js';

/**
 * How a provider's key is sent: `Authorization: Bearer <key>`, or the raw key under a header of its own; or,
 * with no key, `aws`: each request signed with AWS Signature Version 4 (src/routing/auth/).
 */
export type AuthScheme = 'bearer' | 'aws' | { readonly header: string };

/** What a provider of a dialect sends unless its routes.yaml entry says otherwise. Plain data: the routes compiler applies it. */
export interface DialectDefaults {
  readonly auth: AuthScheme;
  /** Lower-case names; a routes.yaml `headers` entry of the same name (any case) replaces one. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Provider-native top-level fields that make the provider act on the world or bill differently: a caller may
   * send one only where routes.yaml `allow_fields` lists it (on the provider or the model); the compiler refuses other names there.
   */
  readonly gatedFields: readonly string[];
  /** Model kinds the dialect serves besides chat (routes.yaml `kind`): `embedding` when it has an embeddings API. Absent: chat only. */
  readonly kinds?: readonly ModelKind[];
}

/** routes.yaml `kind` of a model: what it does, and so which endpoints serve it. */
export type ModelKind = 'chat' | 'embedding';

/** The caller's request as the engine hands it to a dialect. */
export interface OutgoingCall {
  /** The body exactly as the caller sent it. */
  readonly text: string;
  /** The same body, parsed and checked against the request schema. */
  readonly body: ChatCompletionRequest;
  readonly upstreamModel: string;
  /** routes.yaml max_output_tokens of the model: the output limit to ask for when the caller sets none; null when not given. */
  readonly maxOutputTokens: number | null;
  /** routes.yaml reasoning of the model: how it thinks, if at all. */
  readonly reasoning: ReasoningMode;
  /** routes.yaml thinking_budget of a gemini `budget` model (its default applied); absent for other models. */
  readonly thinkingBudget?: ThinkingBudget | undefined;
  /** routes.yaml reasoning_levels of a gemini `levels` model, lowest first (its default applied); absent for other models. */
  readonly reasoningLevels?: readonly string[] | undefined;
  /** Ask the provider to report usage in the stream although the caller did not (the gateway counts tokens). */
  readonly requestStreamUsage: boolean;
  /** routes.yaml allow_fields of the model and its provider: the gated fields (DialectDefaults.gatedFields) a caller may send. */
  readonly allowedFields: readonly string[];
}

/** Where and what to send for one call. */
export interface OutgoingRequest {
  /** Appended to the provider's base_url (no leading slash); may name the model and the method (`models/m:generateContent`). */
  readonly path: string;
  readonly body: string;
  /** Headers of this call only (a request signature), on top of the provider's fixed ones built at start-up. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Reads this call's 2xx answer, for a call whose answer cannot be read without the request (how many inputs were
   * sent, which encoding the caller asked for); absent: the dialect's readResponse.
   */
  readonly readResponse?: (text: string, routingModel: string) => TranslatedResponse | undefined;
}

/** A non-streamed answer translated for the caller. */
export interface TranslatedResponse {
  /** OpenAI chat.completion JSON (or the native format's answer) with `model` set to the caller's routing string. */
  readonly text: string;
  readonly usage: Usage | null;
  /** What the provider said of its answer, as it said it, for the attempt's span (docs/observability.md); unbounded, untrusted. */
  readonly described?: AnswerDescription;
}

/** The provider's id, model and finish (stop) reasons of one answer; null or empty when it gave none. */
export interface AnswerDescription {
  readonly id: unknown;
  readonly model: unknown;
  readonly finishReasons: readonly unknown[];
}

/** What to send the caller for one upstream stream message. */
export interface StreamStep {
  /** SSE text to write now; may be empty. */
  readonly frames: string;
  /** Set when this message ends the stream: `done` after the provider's end marker, `error` after an error event. */
  readonly end?: 'done' | 'error';
  /** Token counts when this message carried them. */
  readonly usage?: Usage;
  /**
   * The characters of answer text in frames (answerTextChars in observe/usage-estimate.ts), when the dialect counted
   * them on its way; else the engine counts them itself (for the usage it estimates when the provider reports none).
   */
  readonly textChars?: number | undefined;
  /**
   * With `end: 'error'`: the provider's error as an HTTP failure. Before the stream's first event reached the
   * caller, the engine treats it exactly like that status (error rules, failover, breaker).
   */
  readonly failure?: StreamFailure;
}

/** A provider's in-stream error as the HTTP answer it stands for. */
export interface StreamFailure {
  /** The status the provider would have answered with (Anthropic's overloaded_error: 529); 500 when it does not say. */
  readonly status: number;
  readonly details: ProviderErrorDetails;
}

/** Per-request state for translating one upstream stream. */
export interface StreamTranslator {
  translate(message: SseMessage): StreamStep;
  /**
   * The provider ended the body. A framing with no end marker (Gemini's: the end of the body is the end)
   * returns the step that finishes the answer; undefined when the stream is incomplete, which the engine
   * answers with its own final error event.
   */
  end?(): StreamStep | undefined;
  /** What the provider said of its answer so far: the id and model of its first event, the finish reasons of its last (docs/observability.md). */
  describe?(): AnswerDescription;
  /**
   * What the last message still owes the caller, one piece (one content block's closing) per call, before the
   * next message is translated; undefined when nothing is owed. One message never becomes one giant string.
   */
  owed?(): StreamStep | undefined;
}

/** What a stream translator needs to know about the request. */
export interface StreamContext {
  readonly routingModel: string;
  readonly providerId: string;
  /** The gateway asked for usage the caller did not: the caller must not see it. */
  readonly hideUsage: boolean;
  /** The caller asked for `stream_options.include_usage`: a dialect that builds its own chunks sends the usage chunk. */
  readonly includeUsage: boolean;
  /** The most a translator may accumulate over the stream (a StreamBudget's limit); unlimited when absent (a translator tested alone). */
  readonly maxHeldChars?: number;
  /** The stream's account of what all streams hold at once (MAX_STREAM_BYTES_IN_FLIGHT); absent: not counted (a translator tested alone). */
  readonly holdings?: StreamHoldings;
  /** false: nobody will ask describe() (the request is not traced), so what it would say need not be gathered. */
  readonly described?: boolean;
}

/** What a stream reader needs: the translator's context and the largest event it may hold. */
export interface StreamReaderContext extends StreamContext {
  readonly maxEventChars: number;
}

/**
 * Turns the bytes of one upstream stream into steps for the caller, in the framing the provider uses.
 * Steps are pulled one at a time and translated only when pulled, so the engine can send the first
 * event before the rest of its read is translated (no iterator or array per read on the hot path).
 */
export interface StreamReader {
  /** Takes one read of the stream. */
  push(chunk: Buffer): void;
  /**
   * The next step of what was pushed; undefined once the pushed bytes hold no further whole event. Throws
   * EventTooLargeError when an event outgrows the limit, StreamLimitError when the stream outgrows one of its own.
   */
  next(): StreamStep | undefined;
  /**
   * The provider closed the stream; what it left unfinished is dropped. Returns the step that finishes the
   * answer for a framing whose end is the end of the body, else undefined (the stream ended early).
   */
  end(): StreamStep | undefined;
  /** What the provider said of its answer so far (StreamTranslator.describe), when its dialect says. */
  describe?(): AnswerDescription;
}

/**
 * How the engine talks to one kind of provider. The engine knows where (routes.yaml) and when
 * (timeouts, errors); a dialect knows only what goes on the wire. Its default auth scheme and headers
 * are data beside it (./<dialect>/defaults.ts), which the routes compiler applies.
 */
export interface Dialect {
  /** Path, body (and any per-call headers) of one call; throws the gateway's 400 when the request cannot be expressed. */
  buildRequest(call: OutgoingCall): OutgoingRequest;
  /** Reads a 2xx body; undefined when it is not a usable answer (the engine answers 502). */
  readResponse(text: string, routingModel: string): TranslatedResponse | undefined;
  /** Reads a non-2xx answer (its body, and its headers where a provider puts its code there) for the provider's own message and code; never throws. */
  readError(text: string, headers: IncomingHttpHeaders): ProviderErrorDetails;
  /** A reader for one streamed answer: its framing and its translation. */
  createStreamReader(context: StreamReaderContext): StreamReader;
  /**
   * The media type of this dialect's streamed answers (lower case, no parameters); absent: `text/event-stream`.
   * A 2xx answer to a streamed request of another type is invalid_upstream_response.
   */
  readonly streamContentType?: string;
  /** The inbound wire formats this dialect takes as the caller sent them for this route's model; undefined for a format it does not. */
  native?(format: NativeFormat, route: NativeRoute): NativeDialect | undefined;
}

/** Inbound wire formats a dialect may take natively (the caller's body, not the internal chat form). */
export type NativeFormat = 'anthropic-messages' | 'anthropic-count-tokens' | 'openai-responses' | 'openai-embeddings';

/** What routes.yaml says of the model that decides a native format: `api: responses` (openai dialect). */
export interface NativeRoute {
  readonly api?: ModelTable['api'];
  /** routes.yaml allow_fields of the model and its provider: the gated fields a native body may carry. */
  readonly allowFields?: readonly string[];
  readonly reasoning?: ModelTable['reasoning'];
}

/** A caller's body in an inbound wire format, for a dialect that takes it natively. */
export interface NativeCall {
  readonly format: NativeFormat;
  /** The body exactly as the caller sent it. */
  readonly text: string;
  /** The caller's headers the format lets through (already filtered by an allow-list), lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * How a dialect serves one native format: the caller's bytes out, the provider's bytes back (only `model` changed);
 * or, for a format with no internal chat form (`openai-embeddings`), the dialect's own translation both ways.
 */
export interface NativeDialect {
  /** Throws the gateway's 400 for a gated field routes.yaml does not allow this route. */
  buildRequest(call: NativeCall, upstreamModel: string): OutgoingRequest;
  /** A 2xx body with `model` set to the routing string; undefined when it is not a usable answer. */
  readResponse(text: string, routingModel: string): TranslatedResponse | undefined;
  createStreamReader(context: StreamReaderContext): StreamReader;
}
