import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { releaseLine, round, type RequestRecord } from '../../observe/request-log.js';
import { AnswerTextCounter, completionAtLeastEstimated, estimatedUsage } from '../../observe/usage-estimate.js';
import type { StreamReader, StreamStep } from '../../dialects/dialect.js';
import { flattenHead } from '../../wire/flat-copy.js';
import { USAGE_TAIL_BYTES, USAGE_TAIL_MS, type RelayOptions } from './relay-options.js';
import { failureOf, inBandFailure, interrupted } from './stream-failure.js';

/** How long to wait for the provider to finish its response after its end marker, whatever it sends meanwhile (docs/chat-completions.md). */
const DRAIN_AFTER_END_MS = 1000;
/**
 * What the event being read costs at its peak, per byte read for it: held as it arrives, then as its text, its
 * parse, its translation, the inbound writer's parse and event, and the caller's frames, one after another.
 */
const EVENT_PEAK_COPIES = 8;
const STREAM_HEAD = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' } as const;

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
  return new Promise<void>((resolve, reject) => new StreamRelay(options, resolve, reject).start());
}

/** The idle limit ran out: the body is cut, and the cut is told apart from a reset. */
function onIdle(relay: StreamRelay): void {
  relay.idleFired = true;
  relay.body.destroy();
}

function destroy(body: Readable): void {
  body.destroy();
}

/**
 * One stream's state, in fields, with its steps as methods: an open stream holds this object and four bound
 * listeners, where closures held a function and a context slot for every step (~1 KB per open stream, heap
 * snapshots of 3,000 streams, issue 40 line 5).
 */
class StreamRelay {
  readonly body: Readable;
  idleFired = false;
  private readonly res: ServerResponse;
  private readonly record: RequestRecord;
  private readonly reader: StreamReader;
  /** Characters of answer text read from the provider, relayed or read after the caller left: the estimate's completion. */
  private readonly answerText = new AnswerTextCounter();
  private readonly idleMs: number;
  private idle: NodeJS.Timeout;
  /** Bytes read since the last read that completed an event: the event being read, held until it is whole. */
  private unfinished = 0;
  private charged = 0;
  private ended = false;
  private committed = false;
  private settled = false;
  /** The promise is settled: what the body still emits (its close after an end, a late error) changes nothing. */
  private done = false;
  /** The caller left a committed stream: what the provider still sends is read for its usage only (USAGE_TAIL_*). */
  private left = false;
  private tailBytes = 0;
  private tail: NodeJS.Timeout | undefined;
  // What this read has produced so far; a field so that a failure partway through it (a translator's or the inbound
  // writer's budget running out) still sends the events translated before it, ahead of the final error event, whose
  // numbering follows them. (An event over max_upstream_body_bytes is refused by the parser at the next read, once
  // the events before it in its read are handed on: see SseParser.pushWithLane.)
  private frames = '';
  // The listeners, bound once.
  private readonly onData = this.data.bind(this);
  private readonly onOver = this.over.bind(this);
  private readonly onCallerLeft = this.callerLeft.bind(this);
  private readonly onReadAgain = this.readAgain.bind(this);

  constructor(
    private readonly options: RelayOptions,
    private readonly resolve: () => void,
    private readonly reject: (failure: unknown) => void,
  ) {
    const { provider, reply, res, routingModel, hideUsage, includeUsage, maxEventChars, record, holdings, onDescribed } = options;
    this.body = reply.body;
    this.res = res;
    this.record = record;
    const described = onDescribed !== undefined;
    this.reader = options.createReader({ routingModel, providerId: provider.id, hideUsage, includeUsage, maxEventChars, maxHeldChars: maxEventChars, holdings, described });
    this.idleMs = provider.table.streamIdleTimeoutMs;
    this.idle = setTimeout(onIdle, this.idleMs, this);
  }

  start(): void {
    const body = this.body;
    body.on('data', this.onData);
    // A read to the end, an error (an abort's reason among them), or a destroy without one (the idle limit, the usage tail): a cut.
    body.on('end', this.onOver);
    body.on('error', this.onOver);
    body.on('close', this.onOver);
    if (body.destroyed) this.over(body.errored ?? undefined);
  }

  private chargeEvent(bytes: number): void {
    if (bytes > this.charged) this.options.holdings.take(bytes - this.charged);
    else this.options.holdings.give(this.charged - bytes);
    this.charged = bytes;
  }

  private callerLeft(): void {
    if (this.ended || this.left) return;
    this.left = true;
    this.record.gatewayCode ??= 'caller_disconnected';
    this.tail = setTimeout(destroy, USAGE_TAIL_MS, this.body);
  }

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    const { options, record } = this;
    this.res.off('close', this.onCallerLeft);
    // Every answer is charged: the provider's usage, else an estimate (docs/callers.md).
    const chars = this.answerText.chars;
    const raised = record.usage === null ? estimatedUsage(options.promptChars, chars) : this.ended ? undefined : completionAtLeastEstimated(record.usage, chars);
    if (raised) {
      record.usage = raised;
      record.usageEstimated = true;
    }
    const description = options.onDescribed && this.reader.describe?.();
    if (description) options.onDescribed!(description);
    options.onSettled();
    // The line has the stream's outcome, usage and attempts now: it need not wait for the after-end drain.
    releaseLine(record);
  }

  /** Backpressure: reading pauses, its idle limit stopped, until the caller took what it was sent, or left (then reading goes on for the usage). */
  private readAgain(): void {
    this.res.off('drain', this.onReadAgain).off('close', this.onReadAgain);
    if (this.done) return;
    this.idle = setTimeout(onIdle, this.idleMs, this);
    this.body.resume();
  }

  private waitForCaller(): void {
    this.body.pause();
    clearTimeout(this.idle);
    this.res.on('drain', this.onReadAgain).on('close', this.onReadAgain);
  }

  /**
   * The head and the first frames as one write, sent now, before the rest of the read is translated (corked and
   * uncorked as a pair: an unpaired uncork breaks chunked bodies on Node 22+). Whole events only, so a key the
   * provider quotes within one event never reaches the caller.
   */
  private commit(frames: string): void {
    const res = this.res;
    this.committed = true;
    this.record.firstEventMs = round(performance.now() - this.record.startedAt);
    res.cork();
    res.writeHead(200, STREAM_HEAD);
    flattenHead(res); // the head is kept as long as the stream is open
    res.write(this.options.provider.redact(frames));
    res.uncork();
    res.on('close', this.onCallerLeft); // 'close' comes once; a plain listener keeps no once() wrapper while the stream is open
    this.options.onCommit();
  }

  /** The caller's response ends with the stream, unless the caller left it. */
  private finish(): void {
    this.settle();
    if (!this.left) this.res.end();
  }

  /** The promise settles once; a body cut short is destroyed (it is not read again), a body read to its end is let go by letGoWhenDone. */
  private close(failure?: unknown): void {
    this.done = true;
    if (this.committed) this.settle();
    clearTimeout(this.idle);
    clearTimeout(this.tail);
    const body = this.body;
    if (!body.destroyed && !body.readableEnded) body.destroy();
    if (failure === undefined) this.resolve();
    else this.reject(failure);
  }

  /** What every step carries: its usage, an in-band error (thrown before the commit), its answer text; returns the caller's frames of it. */
  private take(step: StreamStep): string {
    if (step.usage) this.record.usage = step.usage;
    if (step.end === 'error') {
      if (!this.committed) throw inBandFailure(this.options, step);
      if (!this.left) this.record.gatewayCode = 'provider_stream_error';
    }
    if (step.frames !== '') this.answerText.add(step.frames, step.textChars);
    // After the caller left, only the usage and the end matter.
    return step.frames === '' || this.left ? '' : this.options.output.frames(step.frames);
  }

  /** One read of the provider's body: its events translated and written to the caller as one write. True when the caller is full. */
  private relayRead(chunk: Buffer): boolean {
    const { reader, options } = this;
    // Charged before it is parsed, with the copies its translation makes; given back once a read completes an event.
    this.unfinished += chunk.length;
    this.chargeEvent(this.unfinished * EVENT_PEAK_COPIES);
    // One write per read; steps are translated as they are pulled, so the caller's first event is sent before the rest of its read is translated.
    this.frames = '';
    reader.push(chunk);
    for (let step = reader.next(); step !== undefined; step = reader.next()) {
      this.unfinished = 0;
      const out = this.take(step);
      if (step.end || (!this.left && options.output.finished?.())) {
        this.frames += out;
        this.ended = true;
        // Keep reading briefly so a well-behaved provider's connection returns to the pool.
        clearTimeout(this.idle);
        this.idle = setTimeout(destroy, DRAIN_AFTER_END_MS, this.body);
        break;
      }
      if (out === '') continue;
      this.frames += out;
      if (!this.committed) {
        this.commit(this.frames);
        this.frames = '';
      }
    }
    this.chargeEvent(this.unfinished * EVENT_PEAK_COPIES);
    const frames = this.frames;
    this.frames = ''; // written below, or nothing: not kept (nor the read it was cut from) while the caller is slow
    if (this.ended) {
      if (this.committed) {
        // The last frames go with the end of the response: one write, not two.
        this.settle();
        if (!this.left) this.res.end(frames === '' ? undefined : options.provider.redact(frames));
      } else {
        this.commit(frames);
        this.finish();
      }
      return false;
    }
    if (frames === '' || this.left) return false;
    return !this.res.write(options.provider.redact(frames));
  }

  /** The body was read to its end: a framing without an end marker (Gemini's) finishes here, if the answer was whole. */
  private lastStep(): void {
    const last = this.reader.end();
    if (!last) throw interrupted(this.options.provider, 'closed the stream before its end marker');
    const out = this.take(last);
    this.ended = true;
    if (!this.committed) this.commit(out);
    else if (out !== '' && !this.left) this.res.write(this.options.provider.redact(out));
    this.finish();
  }

  /** Why the stream broke: an uncommitted attempt rejects with it, a committed stream ends with it as its final event. */
  private failed(error: unknown): void {
    if (this.ended) return this.close();
    const { options, res, record } = this;
    try {
      const failure = failureOf(options, error, this.idleFired);
      if (!this.committed) {
        this.body.destroy();
        record.usage = null; // counts from an answer that never reached the caller
        return this.close(failure);
      }
      if (!res.destroyed && !this.left) {
        record.gatewayCode = failure.body.gateway_code;
        this.settle();
        if (this.frames !== '') res.write(options.provider.redact(this.frames));
        res.end(options.output.error(failure.body));
      }
      this.close();
    } catch (thrown) {
      this.close(thrown);
    }
  }

  /** The body is over: read to its end, failed, or cut (destroyed without an error: the idle limit, the usage tail, a reset). */
  private over(error?: Error): void {
    if (this.done) return;
    if (this.ended) return this.close();
    if (error) return this.failed(error);
    if (this.tailBytes > USAGE_TAIL_BYTES) return this.failed(interrupted(this.options.provider, 'sent no end within the usage tail'));
    if (!this.body.readableEnded) return this.failed(undefined); // failureOf says which cut
    try {
      this.lastStep();
      this.close();
    } catch (thrown) {
      this.failed(thrown);
    }
  }

  private data(chunk: Buffer): void {
    // Drain what follows the end marker so the connection can be reused, but never refresh the
    // after-end timer: a provider that keeps sending must not keep the connection and this handler.
    if (this.done || this.ended) return;
    this.idle.refresh();
    if (this.left && (this.tailBytes += chunk.length) > USAGE_TAIL_BYTES) {
      this.body.destroy();
      return this.over();
    }
    let full: boolean;
    try {
      full = this.relayRead(chunk);
    } catch (error) {
      return this.failed(error);
    }
    if (full) this.waitForCaller();
  }
}
