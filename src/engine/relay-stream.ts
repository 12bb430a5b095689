import type { ServerResponse } from 'node:http';
import type { Usage } from '../generated/types/usage.js';
import { gatewayError, type GatewayError } from './gateway-error.js';
import type { RuntimeProvider } from './runtime-providers.js';
import { sseError } from './sse-format.js';
import { SseEventTooLargeError, SseParser } from './sse-parser.js';
import type { UpstreamReply } from './upstream.js';

/** How long to wait for the provider to finish its response after its end marker. */
const DRAIN_AFTER_END_MS = 1000;

/** How a relayed stream ended, for the request log. */
export interface StreamOutcome {
  readonly end: 'done' | 'provider_error' | 'interrupted' | 'timeout' | 'invalid' | 'caller_left';
  readonly usage: Usage | null;
  readonly firstEventAt: number | null;
}

export interface RelayOptions {
  readonly provider: RuntimeProvider;
  readonly reply: UpstreamReply;
  readonly res: ServerResponse;
  readonly routingModel: string;
  readonly maxEventChars: number;
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
export async function relayStream({ provider, reply, res, routingModel, maxEventChars }: RelayOptions): Promise<StreamOutcome> {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();

  const parser = new SseParser(maxEventChars);
  const translator = provider.dialect.createStreamTranslator({ routingModel, providerId: provider.id });
  const idleMs = provider.table.streamIdleTimeoutMs;
  let idleFired = false;
  const onIdle = () => {
    idleFired = true;
    reply.body.destroy();
  };
  let idle = setTimeout(onIdle, idleMs);
  let usage: Usage | null = null;
  let firstEventAt: number | null = null;
  let ended: StreamOutcome['end'] | null = null;

  try {
    for await (const chunk of reply.body as AsyncIterable<Buffer>) {
      idle.refresh();
      if (ended) continue; // drain what follows the end marker so the connection can be reused
      let frames = '';
      for (const message of parser.push(chunk)) {
        const step = translator.translate(message);
        frames += step.frames;
        if (step.usage) usage = step.usage;
        if (step.end) {
          ended = step.end === 'done' ? 'done' : 'provider_error';
          // Keep reading briefly so a well-behaved provider's connection returns to the pool.
          clearTimeout(idle);
          idle = setTimeout(() => reply.body.destroy(), DRAIN_AFTER_END_MS);
          break;
        }
      }
      if (frames !== '') {
        firstEventAt ??= performance.now();
        if (!res.write(frames) && !ended) {
          clearTimeout(idle);
          if (!(await drained(res))) return { end: 'caller_left', usage, firstEventAt };
          idle = setTimeout(onIdle, idleMs);
        }
      }
      if (ended) res.end();
    }
    parser.end();
    if (ended) return { end: ended, usage, firstEventAt };
    return finish(res, interrupted(provider, 'closed the stream before its end marker'), 'interrupted', usage, firstEventAt);
  } catch (error) {
    if (res.destroyed) return { end: ended ?? 'caller_left', usage, firstEventAt };
    if (ended) return { end: ended, usage, firstEventAt };
    if (idleFired) {
      const timeout = gatewayError('upstream_stream_timeout', `The provider "${provider.id}" sent nothing for ${idleMs} ms (stream_idle_timeout_ms).`, {
        provider: provider.id,
      });
      return finish(res, timeout, 'timeout', usage, firstEventAt);
    }
    if (error instanceof SseEventTooLargeError) {
      reply.body.destroy();
      const invalid = gatewayError('invalid_upstream_response', `The provider "${provider.id}" sent an event larger than ${maxEventChars} characters.`, {
        provider: provider.id,
      });
      return finish(res, invalid, 'invalid', usage, firstEventAt);
    }
    return finish(res, interrupted(provider, 'broke the connection mid-stream'), 'interrupted', usage, firstEventAt);
  } finally {
    clearTimeout(idle);
  }
}

function interrupted(provider: RuntimeProvider, what: string): GatewayError {
  return gatewayError('upstream_stream_interrupted', `The provider "${provider.id}" ${what}; the answer is incomplete.`, { provider: provider.id });
}

function finish(res: ServerResponse, error: GatewayError, end: StreamOutcome['end'], usage: Usage | null, firstEventAt: number | null): StreamOutcome {
  if (!res.destroyed) res.end(sseError(error.body));
  return { end, usage, firstEventAt };
}

/** Resolves true when the caller has taken the buffered data, false when it went away instead. */
function drained(res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const onDrain = () => {
      res.off('close', onClose);
      resolve(true);
    };
    const onClose = () => {
      res.off('drain', onDrain);
      resolve(false);
    };
    res.once('drain', onDrain).once('close', onClose);
  });
}
