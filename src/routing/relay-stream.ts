import type { ServerResponse } from 'node:http';
import type { StreamHoldings } from '../dialects/stream-budget.js';
import type { ErrorRuleSet } from '../generated/types/route-tables.js';
import { releaseLine, round, type RequestRecord } from '../observe/request-log.js';
import { AnswerTextCounter, completionAtLeastEstimated, estimatedUsage } from '../observe/usage-estimate.js';
import type { RuntimeProvider } from './runtime-providers.js';
import type { AnswerDescription, StreamReader, StreamReaderContext, StreamStep } from '../dialects/dialect.js';
import type { StreamFrames } from './answer-writer.js';
import type { UpstreamReply } from './upstream.js';
import { failureOf, inBandFailure, interrupted } from './stream-failure.js';

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
 * Resolves once the provider's response is over (read to its end, or cut), rejects with the attempt's failure.
 *
 * Driven by the body's events, not `for await`: an async iterator costs a promise, a microtask and its
 * end-of-stream listeners per stream and per read, for a loop that never needs to wait except for a slow caller.
 */
export function relayStream(options: RelayOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const { provider, reply, res, routingModel, hideUsage, includeUsage, maxEventChars, record, output, holdings } = options;
    const { onDescribed } = options;
    const body = reply.body;
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
      body.destroy();
    };
    let idle = setTimeout(onIdle, idleMs);
    let ended = false;
    let committed = false;
    let settled = false;
    /** The promise is settled: what the body still emits (its close after an end, a late error) changes nothing. */
    let done = false;
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
      tail = setTimeout(() => body.destroy(), USAGE_TAIL_MS);
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
    /** Backpressure: reading pauses, its idle limit stopped, until the caller took what it was sent, or left (then reading goes on for the usage). */
    const readAgain = () => {
      res.off('drain', readAgain).off('close', readAgain);
      if (done) return;
      idle = setTimeout(onIdle, idleMs);
      body.resume();
    };
    const waitForCaller = () => {
      body.pause();
      clearTimeout(idle);
      res.on('drain', readAgain).on('close', readAgain);
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
    /** The promise settles once; a body cut short is destroyed (it is not read again), a body read to its end is let go by letGoWhenDone. */
    const close = (failure?: unknown) => {
      done = true;
      if (committed) settle();
      clearTimeout(idle);
      clearTimeout(tail);
      if (!body.destroyed && !body.readableEnded) body.destroy();
      if (failure === undefined) resolve();
      else reject(failure);
    };

    /** What every step carries: its usage, an in-band error (thrown before the commit), its answer text; returns the caller's frames of it. */
    const take = (step: StreamStep): string => {
      if (step.usage) record.usage = step.usage;
      if (step.end === 'error') {
        if (!committed) throw inBandFailure(options, step);
        if (!left) record.gatewayCode = 'provider_stream_error';
      }
      if (step.frames !== '') answerText.add(step.frames, step.textChars);
      // After the caller left, only the usage and the end matter.
      return step.frames === '' || left ? '' : output.frames(step.frames);
    };
    // What this read has produced so far; outside the read so that a failure partway through it (a translator's or
    // the inbound writer's budget running out) still sends the events translated before it, ahead of the final error
    // event, whose numbering follows them. (An event over max_upstream_body_bytes is refused by the parser at the
    // next read, once the events before it in its read are handed on: see SseParser.pushWithLane.)
    let frames = '';
    /** One read of the provider's body: its events translated and written to the caller as one write. True when the caller is full. */
    const relayRead = (chunk: Buffer): boolean => {
      // Charged before it is parsed, with the copies its translation makes; given back once a read completes an event.
      unfinished += chunk.length;
      chargeEvent(unfinished * EVENT_PEAK_COPIES);
      // One write per read; steps are translated as they are pulled, so the caller's first event is sent before the rest of its read is translated.
      frames = '';
      reader.push(chunk);
      for (let step = reader.next(); step !== undefined; step = reader.next()) {
        unfinished = 0;
        const out = take(step);
        if (step.end || (!left && output.finished?.())) {
          frames += out;
          ended = true;
          // Keep reading briefly so a well-behaved provider's connection returns to the pool.
          clearTimeout(idle);
          idle = setTimeout(() => body.destroy(), DRAIN_AFTER_END_MS);
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
        return false;
      }
      if (frames === '' || left) return false;
      const full = !res.write(provider.redact(frames));
      frames = ''; // written: not kept (nor the read it was cut from) while the caller is slow
      return full;
    };
    /** The body was read to its end: a framing without an end marker (Gemini's) finishes here, if the answer was whole. */
    const lastStep = () => {
      const last = reader.end();
      if (!last) throw interrupted(provider, 'closed the stream before its end marker');
      const out = take(last);
      ended = true;
      if (!committed) commit(out);
      else if (out !== '' && !left) res.write(provider.redact(out));
      finish();
    };
    /** Why the stream broke: an uncommitted attempt rejects with it, a committed stream ends with it as its final event. */
    const failed = (error: unknown) => {
      if (ended) return close();
      try {
        const failure = failureOf(options, error, idleFired);
        if (!committed) {
          body.destroy();
          record.usage = null; // counts from an answer that never reached the caller
          return close(failure);
        }
        if (!res.destroyed && !left) {
          record.gatewayCode = failure.body.gateway_code;
          settle();
          if (frames !== '') res.write(provider.redact(frames));
          res.end(output.error(failure.body));
        }
        close();
      } catch (thrown) {
        close(thrown);
      }
    };
    /** The body is over: read to its end, failed, or cut (destroyed without an error: the idle limit, the usage tail, a reset). */
    const over = (error?: Error) => {
      if (done) return;
      if (ended) return close();
      if (error) return failed(error);
      if (tailBytes > USAGE_TAIL_BYTES) return failed(interrupted(provider, 'sent no end within the usage tail'));
      if (!body.readableEnded) return failed(undefined); // failureOf says which cut
      try {
        lastStep();
        close();
      } catch (thrown) {
        failed(thrown);
      }
    };

    body.on('data', (chunk: Buffer) => {
      // Drain what follows the end marker so the connection can be reused, but never refresh the
      // after-end timer: a provider that keeps sending must not keep the connection and this handler.
      if (done || ended) return;
      idle.refresh();
      if (left && (tailBytes += chunk.length) > USAGE_TAIL_BYTES) {
        body.destroy();
        return over();
      }
      let full: boolean;
      try {
        full = relayRead(chunk);
      } catch (error) {
        return failed(error);
      }
      if (full) waitForCaller();
    });
    // A read to the end, an error (an abort's reason among them), or a destroy without one (the idle limit, the usage tail): a cut.
    body.on('end', () => over());
    body.on('error', over);
    body.on('close', () => over());
    if (body.destroyed) over(body.errored ?? undefined);
  });
}
