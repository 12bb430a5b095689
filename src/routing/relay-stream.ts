import type { ServerResponse } from 'node:http';
import { gatewayError, type GatewayError } from '../wire/gateway-error.js';
import { round, type RequestRecord } from '../observe/request-log.js';
import type { RuntimeProvider } from './runtime-providers.js';
import type { StreamReader, StreamReaderContext } from '../dialects/dialect.js';
import type { StreamFrames } from './answer-writer.js';
import { EventTooLargeError } from '../wire/event-too-large.js';
import type { UpstreamReply } from './upstream.js';
import { drained } from './drained.js';

/** How long to wait for the provider to finish its response after its end marker, whatever it sends meanwhile (README: Streaming). */
const DRAIN_AFTER_END_MS = 1000;

export interface RelayOptions {
  readonly provider: RuntimeProvider;
  readonly reply: UpstreamReply;
  readonly res: ServerResponse;
  readonly routingModel: string;
  /** The gateway asked for usage the caller did not: the translator hides it. */
  readonly hideUsage: boolean;
  /** The caller asked for usage in the stream (`stream_options.include_usage`). */
  readonly includeUsage: boolean;
  readonly maxEventChars: number;
  /** True once a drain has run out of grace: the stream ends with shutting_down. */
  readonly stopping: () => boolean;
  /** Filled as the stream goes (first event, usage, final error), so the log line is right whenever it is written. */
  readonly record: RequestRecord;
  /** The stream's reader: the dialect's chat translation, or its native one. */
  readonly createReader: (context: StreamReaderContext) => StreamReader;
  /** What the caller's endpoint makes of the reader's frames. */
  readonly output: StreamFrames;
}

/** The provider's 200 answer must be an event stream before the gateway commits to one. */
export function isEventStream(reply: UpstreamReply): boolean {
  const type = reply.headers['content-type'];
  return type === undefined || /^text\/event-stream\b/i.test(type);
}

/**
 * Relays one upstream event stream to the caller, event by event, as each arrives. Reading pauses
 * while the caller is slow (backpressure), and the idle limit counts only while reading. Every way
 * the stream can end without the provider's end marker leaves the caller one final error event.
 */
export async function relayStream(options: RelayOptions): Promise<void> {
  const { provider, reply, res, routingModel, hideUsage, includeUsage, maxEventChars, stopping, record, output } = options;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
  });
  // The head goes out with the first event when that came in the same read as the provider's head (one write,
  // one packet, sooner), else on the loop's next turn: a caller whose provider is slow to start still sees 200.
  // (headersSent is already true after writeHead; nothing has been written until an event is.)
  const flushHead = setImmediate(() => {
    if (record.firstEventMs === null && !res.writableEnded && !res.destroyed) res.flushHeaders();
  });

  const reader = options.createReader({ routingModel, providerId: provider.id, hideUsage, includeUsage, maxEventChars });
  const idleMs = provider.table.streamIdleTimeoutMs;
  let idleFired = false;
  const onIdle = () => {
    idleFired = true;
    reply.body.destroy();
  };
  let idle = setTimeout(onIdle, idleMs);
  let ended = false;

  try {
    for await (const chunk of reply.body as AsyncIterable<Buffer>) {
      // Drain what follows the end marker so the connection can be reused, but never refresh the
      // after-end timer: a provider that keeps sending must not keep the connection and this handler.
      if (ended) continue;
      idle.refresh();
      // One write per read; steps are translated as they are pulled, so the caller's first event is sent before the rest of its read is translated.
      let frames = '';
      reader.push(chunk);
      for (let step = reader.next(); step !== undefined; step = reader.next()) {
        if (step.frames !== '') frames += output.frames(step.frames);
        if (step.usage) record.usage = step.usage;
        if (step.end || output.finished?.()) {
          ended = true;
          if (step.end === 'error') record.gatewayCode = 'provider_stream_error';
          // Keep reading briefly so a well-behaved provider's connection returns to the pool.
          clearTimeout(idle);
          idle = setTimeout(() => reply.body.destroy(), DRAIN_AFTER_END_MS);
          break;
        }
        if (record.firstEventMs === null && frames !== '') {
          record.firstEventMs = round(performance.now() - record.startedAt);
          // A lone write is held (corked) until the next tick, behind the rest of this read. Corked and
          // uncorked as a pair, it goes to the socket now, before the rest of the read is translated.
          // (An unpaired uncork breaks chunked bodies on Node 22+.) Whole events only, so a key the
          // provider quotes within one event never reaches the caller.
          res.cork();
          res.write(provider.redact(frames));
          res.uncork();
          frames = '';
        }
      }
      if (frames !== '') {
        if (record.firstEventMs === null) record.firstEventMs = round(performance.now() - record.startedAt);
        if (!res.write(provider.redact(frames)) && !ended) {
          frames = ''; // written: not kept (nor the read it was cut from) while the caller is slow
          clearTimeout(idle);
          if (!(await drained(res))) return;
          idle = setTimeout(onIdle, idleMs);
        }
      }
      if (ended) res.end();
    }
    // A framing without an end marker (Gemini's) finishes at the end of the body, if the answer was whole.
    const last = ended ? undefined : reader.end();
    if (last) {
      ended = true;
      if (last.usage) record.usage = last.usage;
      if (last.end === 'error') record.gatewayCode = 'provider_stream_error';
      const frames = last.frames === '' ? '' : output.frames(last.frames);
      if (record.firstEventMs === null && frames !== '') record.firstEventMs = round(performance.now() - record.startedAt);
      res.end(provider.redact(frames));
    }
    if (!ended) finish(res, record, output, interrupted(provider, 'closed the stream before its end marker'));
  } catch (error) {
    if (res.destroyed || ended) return;
    if (stopping()) {
      finish(res, record, output, gatewayError('shutting_down', 'The gateway is shutting down; the answer is incomplete.', { provider: provider.id }));
      return;
    }
    if (idleFired) {
      const timeout = gatewayError('upstream_stream_timeout', `The provider "${provider.id}" sent nothing for ${idleMs} ms (stream_idle_timeout_ms).`, {
        provider: provider.id,
      });
      finish(res, record, output, timeout);
      return;
    }
    if (error instanceof EventTooLargeError) {
      reply.body.destroy();
      const invalid = gatewayError('invalid_upstream_response', `The provider "${provider.id}" sent an event larger than ${maxEventChars} characters.`, {
        provider: provider.id,
      });
      finish(res, record, output, invalid);
      return;
    }
    finish(res, record, output, interrupted(provider, 'broke the connection mid-stream'));
  } finally {
    clearTimeout(idle);
    clearImmediate(flushHead);
  }
}

function interrupted(provider: RuntimeProvider, what: string): GatewayError {
  return gatewayError('upstream_stream_interrupted', `The provider "${provider.id}" ${what}; the answer is incomplete.`, { provider: provider.id });
}

/** Ends the stream with the gateway's final error event. */
function finish(res: ServerResponse, record: RequestRecord, output: StreamFrames, error: GatewayError): void {
  record.gatewayCode = error.body.gateway_code;
  if (!res.destroyed) res.end(output.error(error.body));
}

