import type { ServerResponse } from 'node:http';
import type { ErrorBody } from '../generated/types/error-envelope.js';
import type { NativeCall } from '../dialects/dialect.js';
import type { StreamHoldings } from '../dialects/stream-budget.js';
import { sseError } from '../wire/sse-format.js';
import type { CallerPaths } from '../wire/caller-paths.js';

/**
 * Where a served answer goes. The engine hands each answer over in one form (the internal chat form, or the
 * caller's own wire format when the dialect took the body natively); an inbound endpoint's writer turns it
 * into what its caller reads. Failover, limits and logs stay the engine's: a writer only translates.
 */
export interface AnswerWriter {
  /** A whole non-streamed 2xx answer: writes the response. */
  whole(res: ServerResponse, status: number, text: string): void;
  /** A translator for one streamed answer, made when the stream starts; what it holds is charged to `holdings`. */
  stream(holdings?: StreamHoldings): StreamFrames;
}

/** Turns the frames a dialect's stream reader made into the caller's frames, in order. */
export interface StreamFrames {
  /** Frames for the caller now (may be empty). */
  frames(text: string): string;
  /** The last frames of a stream that broke after its 200, carrying the gateway's envelope. */
  error(body: ErrorBody): string;
  /** True once the writer has ended the caller's stream on its own (e.g. an answer over its size limit): the relay stops. */
  finished?(): boolean;
}

/** How one request's answers reach the caller. */
export interface AnswerPlan {
  /**
   * Answers in the internal chat form (every dialect gives this), or why this request has no chat form (a field
   * only the native format carries, an endpoint only native routes serve): thrown before any call is made.
   */
  readonly chat: AnswerWriter | { readonly refusal: Error };
  /** The caller's body in a wire format some dialects take as it is, and the writer for answers in that format. */
  readonly native?: { readonly call: NativeCall; readonly writer: AnswerWriter };
  /** What the writers keep of the request until the response closes (the Responses echo), in MAX_BODY_BYTES_IN_FLIGHT bytes. */
  readonly keeps?: number;
  /** Where each path of the chat form came from in the caller's body, so a 400 about it names the caller's field. */
  readonly paths?: CallerPaths;
}

/** OpenAI chat bytes, as /v1/chat/completions answers them. */
export const CHAT_ANSWER: AnswerWriter = {
  whole(res, status, text) {
    res.statusCode = status;
    res.setHeader('content-type', 'application/json');
    res.setHeader('content-length', Buffer.byteLength(text));
    res.end(text);
  },
  stream: () => PASS_THROUGH,
};

const PASS_THROUGH: StreamFrames = { frames: (text) => text, error: sseError };
