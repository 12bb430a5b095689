import type { ServerResponse } from 'node:http';
import type { StreamStep } from '../dialects/dialect.js';
import { StreamLimitError, StreamsFullError, type StreamHoldings } from '../dialects/stream-budget.js';
import type { ErrorRuleSet } from '../generated/types/route-tables.js';
import { gatewayError, GatewayError } from '../wire/gateway-error.js';
import { findErrorRule, providerError } from '../wire/provider-error.js';
import { releaseLine, round, type RequestRecord } from '../observe/request-log.js';
import { AnswerTextCounter, completionAtLeastEstimated, estimatedUsage } from '../observe/usage-estimate.js';
import type { RuntimeProvider } from './runtime-providers.js';
import type { AnswerDescription, StreamReader, StreamReaderContext } from '../dialects/dialect.js';
import type { StreamFrames } from './answer-writer.js';
import { EventTooLargeError } from '../wire/event-too-large.js';
import type { UpstreamReply } from './upstream.js';
import { drained } from './drained.js';

/** How long to wait for the provider to finish its response after its end marker, whatever it sends meanwhile (docs/chat-completions.md). */
const DRAIN_AFTER_END_MS = 1000;
/**
 * What the event being read costs at its peak, per byte read for it: held as it arrives, then as its text, its
 * parse, its translation, the inbound writer's parse and event, and the caller's frames, one after another.
 */
const EVENT_PEAK_COPIES = 8;
/**
 * How long, and how many bytes, the provider's stream is still read after the caller left, for the usage it reports
 * at its end (docs/callers.md): the answer is charged that usage, or an estimate when it does not come in time.
 */
export const USAGE_TAIL_MS = 5000;
export const USAGE_TAIL_BYTES = 1024 * 1024;
const STREAM_HEAD = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' } as const;

export interface RelayOptions {
  readonly provider: RuntimeProvider;
  readonly reply: UpstreamReply;
  readonly res: ServerResponse;
  readonly routingModel: string;
  /** The gateway asked for usage the caller did not: the translator hides it. */
  readonly hideUsage: boolean;
  /** The caller asked for usage in the stream (`stream_options.include_usage`). */
  readonly includeUsage: boolean;
  /** MAX_UPSTREAM_BODY_BYTES: the largest event, and the most a dialect may accumulate over the stream. */
  readonly maxEventChars: number;
  /** This stream's account of what all streams hold at once (MAX_STREAM_BYTES_IN_FLIGHT): the event being read is charged to it. */
  readonly holdings: StreamHoldings;
  /** The global error rules: an error event before the first event is answered as its HTTP status would be. */
  readonly errors: ErrorRuleSet;
  /** True once a drain has run out of grace: the stream ends with shutting_down. */
  readonly stopping: () => boolean;
  /** Filled as the stream goes (first event, usage, final error), so the log line is right whenever it is written. */
  readonly record: RequestRecord;
  /** The stream's reader: the dialect's chat translation, or its native one. */
  readonly createReader: (context: StreamReaderContext) => StreamReader;
  /** What the caller's endpoint makes of the reader's frames. */
  readonly output: StreamFrames;
  /** Called once the first event has been written: the stream is the answer from then on (no failover). */
  readonly onCommit: () => void;
  /** Called once a committed stream's outcome is in record.gatewayCode, before the caller's response ends, so the log line has it. */
  readonly onSettled: () => void;
  /** Characters of the request body sent to the provider: the prompt of the usage estimate. */
  readonly promptChars: number;
  /** Told, just before onSettled, what the provider said of its answer (id, model, finish reasons) when its dialect says. */
  readonly onDescribed?: (described: AnswerDescription) => void;
}

/** The provider's 200 answer must be a stream of its dialect's type (`text/event-stream` unless it says) before the gateway commits to one. */
export function isEventStream(reply: UpstreamReply, mediaType = 'text/event-stream'): boolean {
  const type = reply.headers['content-type'];
  if (type === undefined) return true;
  const lower = type.toLowerCase();
  return lower.startsWith(mediaType) && !/[a-z0-9.+-]/.test(lower.charAt(mediaType.length));
}

/**
 * Relays one upstream event stream to the caller, event by event, as each arrives. The stream commits when
 * its first event is written (the 200 head goes with it): until then an error event, a cut, silence past the
 * idle limit or a stream over a limit is thrown like an HTTP failure, so the caller can be served by failover.
 * Reading pauses while the caller is slow (backpressure), and the idle limit counts only while reading. Every
 * way a committed stream can end without the provider's end marker leaves the caller one final error event.
 */
export async function relayStream(options: RelayOptions): Promise<void> {
  const { provider, reply, res, routingModel, hideUsage, includeUsage, maxEventChars, record, output, holdings } = options;
  const { onDescribed } = options;
  const described = onDescribed !== undefined;
  const reader = options.createReader({ routingModel, providerId: provider.id, hideUsage, includeUsage, maxEventChars, maxHeldChars: maxEventChars, holdings, described });
  /** Bytes read since the last read that completed an event: the event being read, held until it is whole. */
  let unfinished = 0;
  let charged = 0;
  const chargeEvent = (bytes: number) => {
    if (bytes > charged) holdings.take(bytes - charged);
    else holdings.give(charged - bytes);
    charged = bytes;
  };
  const idleMs = provider.table.streamIdleTimeoutMs;
  let idleFired = false;
  const onIdle = () => {
    idleFired = true;
    reply.body.destroy();
  };
  let idle = setTimeout(onIdle, idleMs);
  let ended = false;
  let committed = false;
  let settled = false;
  /** The caller left a committed stream: what the provider still sends is read for its usage only (USAGE_TAIL_*). */
  let left = false;
  let tailBytes = 0;
  let tail: NodeJS.Timeout | undefined;
  /** Characters of answer text read from the provider, relayed or read after the caller left: the estimate's completion. */
  const answerText = new AnswerTextCounter();
  const onCallerLeft = () => {
    if (ended || left) return;
    left = true;
    record.gatewayCode ??= 'caller_disconnected';
    tail = setTimeout(() => reply.body.destroy(), USAGE_TAIL_MS);
  };
  const settle = () => {
    if (settled) return;
    settled = true;
    res.off('close', onCallerLeft);
    // Every answer is charged: the provider's usage, else an estimate (docs/callers.md).
    const raised = record.usage === null ? estimatedUsage(options.promptChars, answerText.chars) : ended ? undefined : completionAtLeastEstimated(record.usage, answerText.chars);
    if (raised) {
      record.usage = raised;
      record.usageEstimated = true;
    }
    const description = onDescribed && reader.describe?.();
    if (description) onDescribed(description);
    options.onSettled();
    // The line has the stream's outcome, usage and attempts now: it need not wait for the after-end drain.
    releaseLine(record);
  };
  /** Backpressure: reading waits, its idle limit stopped, until the caller took what it was sent, or left (then reading goes on for the usage). */
  const callerTookIt = async (): Promise<void> => {
    clearTimeout(idle);
    await drained(res);
    idle = setTimeout(onIdle, idleMs);
  };
  /**
   * The head and the first frames as one write, sent now, before the rest of the read is translated (corked and
   * uncorked as a pair: an unpaired uncork breaks chunked bodies on Node 22+). Whole events only, so a key the
   * provider quotes within one event never reaches the caller.
   */
  const commit = (frames: string) => {
    committed = true;
    record.firstEventMs = round(performance.now() - record.startedAt);
    res.cork();
    res.writeHead(200, STREAM_HEAD);
    res.write(provider.redact(frames));
    res.uncork();
    res.on('close', onCallerLeft); // 'close' comes once; a plain listener keeps no once() wrapper while the stream is open
    options.onCommit();
  };
  /** The caller's response ends with the stream, unless the caller left it. */
  const finish = () => {
    settle();
    if (!left) res.end();
  };

  // What this read has produced so far; outside the loop so that a failure partway through a read (a translator's or
  // the inbound writer's budget running out) still sends the events translated before it, ahead of the final error
  // event, whose numbering follows them. (An event over max_upstream_body_bytes is refused by the parser at the
  // next read, once the events before it in its read are handed on: see SseParser.pushWithLane.)
  let frames = '';
  try {
    for await (const chunk of reply.body as AsyncIterable<Buffer>) {
      // Drain what follows the end marker so the connection can be reused, but never refresh the
      // after-end timer: a provider that keeps sending must not keep the connection and this handler.
      if (ended) continue;
      idle.refresh();
      if (left && (tailBytes += chunk.length) > USAGE_TAIL_BYTES) break;
      // Charged before it is parsed, with the copies its translation makes; given back once a read completes an event.
      unfinished += chunk.length;
      chargeEvent(unfinished * EVENT_PEAK_COPIES);
      // One write per read; steps are translated as they are pulled, so the caller's first event is sent before the rest of its read is translated.
      frames = '';
      reader.push(chunk);
      for (let step = reader.next(); step !== undefined; step = reader.next()) {
        unfinished = 0;
        if (step.usage) record.usage = step.usage;
        if (step.end === 'error') {
          if (!committed) throw inBandFailure(options, step);
          if (!left) record.gatewayCode = 'provider_stream_error';
        }
        if (step.frames !== '') answerText.add(step.frames, step.textChars);
        // After the caller left, only the usage and the end matter.
        const out = step.frames === '' || left ? '' : output.frames(step.frames);
        if (step.end || (!left && output.finished?.())) {
          frames += out;
          ended = true;
          // Keep reading briefly so a well-behaved provider's connection returns to the pool.
          clearTimeout(idle);
          idle = setTimeout(() => reply.body.destroy(), DRAIN_AFTER_END_MS);
          break;
        }
        if (out === '') continue;
        frames += out;
        if (!committed) {
          commit(frames);
          frames = '';
        }
      }
      chargeEvent(unfinished * EVENT_PEAK_COPIES);
      if (ended) {
        if (committed) {
          // The last frames go with the end of the response: one write, not two.
          settle();
          if (!left) res.end(frames === '' ? undefined : provider.redact(frames));
        } else {
          commit(frames);
          finish();
        }
        frames = '';
      } else if (frames !== '' && !left) {
        const full = !res.write(provider.redact(frames));
        frames = ''; // written: not kept (nor the read it was cut from) while the caller is slow
        if (full) await callerTookIt();
      }
    }
    // A framing without an end marker (Gemini's) finishes at the end of the body, if the answer was whole.
    const last = ended || tailBytes > USAGE_TAIL_BYTES ? undefined : reader.end();
    if (last) {
      if (last.usage) record.usage = last.usage;
      if (last.end === 'error') {
        if (!committed) throw inBandFailure(options, last);
        if (!left) record.gatewayCode = 'provider_stream_error';
      }
      if (last.frames !== '') answerText.add(last.frames, last.textChars);
      const out = last.frames === '' || left ? '' : output.frames(last.frames);
      ended = true;
      if (!committed) commit(out);
      else if (out !== '' && !left) res.write(provider.redact(out));
      finish();
    }
    if (!ended) throw interrupted(provider, left ? 'sent no end within the usage tail' : 'closed the stream before its end marker');
  } catch (error) {
    if (ended) return;
    const failure = failureOf(options, error, idleFired);
    if (!committed) {
      reply.body.destroy();
      record.usage = null; // counts from an answer that never reached the caller
      throw failure;
    }
    if (!res.destroyed && !left) {
      record.gatewayCode = failure.body.gateway_code;
      settle();
      if (frames !== '') res.write(provider.redact(frames));
      res.end(output.error(failure.body));
    }
  } finally {
    if (committed) settle();
    clearTimeout(idle);
    clearTimeout(tail);
    if (left && !ended && !reply.body.destroyed) reply.body.destroy();
  }
}

/** Why the stream broke, as the gateway's error: the final event of a committed stream, else the attempt's failure. */
function failureOf({ provider, reply, maxEventChars, stopping }: RelayOptions, error: unknown, idleFired: boolean): GatewayError {
  if (error instanceof GatewayError) return error;
  if (stopping()) return gatewayError('shutting_down', 'The gateway is shutting down; the answer is incomplete.', { provider: provider.id });
  if (idleFired) {
    return gatewayError('upstream_stream_timeout', `The provider "${provider.id}" sent nothing for ${provider.table.streamIdleTimeoutMs} ms (stream_idle_timeout_ms).`, {
      provider: provider.id,
    });
  }
  if (error instanceof StreamsFullError) {
    reply.body.destroy();
    return gatewayError('overloaded', `The streams in flight hold as much as the gateway's memory allows (MAX_STREAM_BYTES_IN_FLIGHT); send the request again.`, {
      provider: provider.id,
      headers: { 'retry-after': '1' },
    });
  }
  if (error instanceof EventTooLargeError || error instanceof StreamLimitError) {
    reply.body.destroy();
    const what = error instanceof StreamLimitError ? error.what : `sent an event larger than ${maxEventChars} characters`;
    // (StreamLimitError's `what` completes the same sentence.)
    return gatewayError('invalid_upstream_response', `The provider "${provider.id}" ${what}.`, { provider: provider.id });
  }
  return interrupted(provider, 'broke the connection mid-stream');
}

/** An error event before the first event: the provider's failure as the HTTP status it stands for, through the error rules. */
function inBandFailure({ provider, reply, errors }: RelayOptions, step: StreamStep): GatewayError {
  const status = step.failure?.status ?? 500;
  const message = step.failure?.details.message ?? `The provider "${provider.id}" reported an error before its first event.`;
  const rule = findErrorRule(provider.table.errors, errors, status);
  return providerError(provider.id, status, reply.headers, { message, code: step.failure?.details.code ?? null }, rule);
}

function interrupted(provider: RuntimeProvider, what: string): GatewayError {
  return gatewayError('upstream_stream_interrupted', `The provider "${provider.id}" ${what}; the answer is incomplete.`, { provider: provider.id });
}
