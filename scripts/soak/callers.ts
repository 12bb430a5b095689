// The soak's callers: node:http requests (not fetch) so each caller decides when it reads and when it leaves.
import { request, type Agent, type IncomingHttpHeaders } from 'node:http';
import { chance, pick, pickWeighted, randomInt, type SoakModel } from './common.js';
import type { FaultKind } from './mock-provider.js';

/**
 * normal: reads as it comes; slow: stops reading for a few seconds after the first bytes; disconnect: leaves
 * at a random moment (a streamed caller within 500 ms of its first bytes, a non-streamed one within 20-400 ms of sending).
 */
export type CallerMode = 'normal' | 'slow' | 'disconnect';

const MODES: Readonly<Record<CallerMode, number>> = { normal: 80, slow: 10, disconnect: 10 };

export interface CallSpec {
  readonly requestId: string;
  readonly model: SoakModel;
  readonly stream: boolean;
  /** The caller asks for usage itself (stream_options.include_usage). */
  readonly includeUsage: boolean;
  readonly mode: CallerMode;
  readonly pauseMs: number;
  readonly abortAfterMs: number;
  /** What starts the abortAfterMs clock of a caller that leaves: sending, the response's head, or its first bytes. */
  readonly leaveAfter: 'send' | 'response' | 'first-bytes';
  /** The behaviour the mock provider must pick (metadata.soak_fault), or null for its weighted mix. */
  readonly fault: FaultKind | null;
  /** Filler added to the message, to make each request's body this much larger. */
  readonly padBytes: number;
}

export interface CallResult {
  readonly spec: CallSpec;
  /** performance.now() when the request was sent, and how long until the answer ended (or broke, or the caller left). */
  readonly startedAt: number;
  readonly durationMs: number;
  readonly status: number | null;
  readonly headers: IncomingHttpHeaders | null;
  readonly body: string;
  /** The response arrived to its end. */
  readonly complete: boolean;
  /** What broke, when something did and the caller was not the one leaving. */
  readonly transportError: string | null;
  /** The caller left on purpose (disconnect mode) before the answer ended. */
  readonly abortedAt: number | null;
  /** No end within the hard cap: the caller gave up. */
  readonly hung: boolean;
  /** How long a slow caller kept from reading. */
  readonly pausedMs: number;
}

export interface CallersOptions {
  readonly origin: string;
  readonly agent: Agent;
  readonly models: readonly SoakModel[];
  readonly concurrency: number;
  readonly durationMs: number;
  readonly hardCapMs: number;
  readonly idPrefix: string;
  readonly onResult: (result: CallResult) => void;
}

/** `concurrency` callers, each sending one request after another until the duration is over; resolves when all are done. */
export async function runCallers(options: CallersOptions): Promise<void> {
  const deadline = performance.now() + options.durationMs;
  let sent = 0;
  const caller = async () => {
    while (performance.now() < deadline) {
      const spec = nextSpec(`${options.idPrefix}-${++sent}`, options.models);
      options.onResult(await call(options.origin, options.agent, spec, options.hardCapMs));
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, caller));
}

function nextSpec(requestId: string, models: readonly SoakModel[]): CallSpec {
  const stream = chance(0.6);
  const mode = pickWeighted(MODES);
  return {
    requestId,
    model: pick(models),
    stream,
    includeUsage: stream && chance(0.3),
    mode,
    pauseMs: mode === 'slow' ? randomInt(2000, 5000) : 0,
    abortAfterMs: mode !== 'disconnect' ? 0 : stream ? randomInt(0, 500) : randomInt(20, 400),
    leaveAfter: stream ? 'first-bytes' : 'send',
    fault: null,
    padBytes: 0,
  };
}

function requestBody(spec: CallSpec): string {
  return JSON.stringify({
    model: spec.model.routing,
    messages: [{ role: 'user', content: `soak ${spec.requestId}${' '.repeat(spec.padBytes)}` }],
    ...(spec.stream ? { stream: true } : chance(0.5) ? { stream: false } : {}),
    ...(spec.includeUsage ? { stream_options: { include_usage: true } } : {}),
    temperature: 0.7,
    // An unknown field the gateway forwards untouched; the mock provider reads the caller's intent from it.
    metadata: { soak_usage: spec.includeUsage, ...(spec.fault ? { soak_fault: spec.fault } : {}) },
  });
}

/**
 * One request through the gateway. Never rejects: every way it can end is in the result. A caller that
 * leaves starts its abortAfterMs clock at spec.leaveAfter, and only once `ready` (when given) has resolved.
 */
export function call(origin: string, agent: Agent, spec: CallSpec, hardCapMs: number, ready?: () => Promise<void>): Promise<CallResult> {
  return new Promise((resolve) => {
    const startedAt = performance.now();
    const chunks: Buffer[] = [];
    let status: number | null = null;
    let headers: IncomingHttpHeaders | null = null;
    let complete = false;
    let transportError: string | null = null;
    let abortedAt: number | null = null;
    let hung = false;
    let pausedMs = 0;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];

    const body = requestBody(spec);
    const req = request(`${origin}/v1/chat/completions`, {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-request-id': spec.requestId },
    });
    const finish = () => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      resolve({
        spec,
        startedAt,
        durationMs: performance.now() - startedAt,
        status,
        headers,
        body: Buffer.concat(chunks).toString('utf8'),
        complete,
        transportError,
        abortedAt,
        hung,
        pausedMs,
      });
    };
    const leave = (why: 'hung' | 'disconnect') => {
      if (complete || settled) return;
      if (why === 'hung') hung = true;
      else abortedAt = performance.now();
      req.destroy();
      finish();
    };
    timers.push(setTimeout(() => leave('hung'), hardCapMs));
    const leaveSoon = () => timers.push(setTimeout(() => leave('disconnect'), spec.abortAfterMs));
    const leaveLater = () => (ready ? void ready().then(() => !settled && leaveSoon()) : leaveSoon());
    if (spec.mode === 'disconnect' && spec.leaveAfter === 'send') leaveLater();

    req.on('error', (error: NodeJS.ErrnoException) => {
      if (settled) return;
      transportError = `${error.code ?? error.name}: ${error.message}`;
      finish();
    });
    req.on('response', (res) => {
      status = res.statusCode ?? null;
      headers = res.headers;
      if (spec.mode === 'disconnect' && spec.leaveAfter === 'response') leaveLater();
      let pausing = false;
      res.on('data', (chunk: Buffer) => {
        if (chunks.length === 0 && spec.mode === 'disconnect' && spec.leaveAfter === 'first-bytes') leaveLater();
        chunks.push(chunk);
        if (spec.mode !== 'slow' || pausing) return;
        pausing = true;
        res.pause();
        const pausedAt = performance.now();
        timers.push(
          setTimeout(() => {
            pausedMs = performance.now() - pausedAt;
            res.resume();
          }, spec.pauseMs),
        );
      });
      res.on('end', () => (complete = true));
      res.on('error', () => {}); // a response cut off shows as !complete on close
      res.on('close', () => {
        if (!complete && !settled) transportError ??= 'the response was cut off';
        finish();
      });
    });
    req.end(body);
  });
}
