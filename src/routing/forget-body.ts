import type { Readable } from 'node:stream';
import type { OutgoingRequest } from '../dialects/dialect.js';

/** What got keeps of a request for its whole life: its options, and the option objects they were built from. */
interface GotRequestOptions {
  body?: unknown;
  readonly _init?: readonly Record<string, unknown>[];
}

/**
 * A committed stream's call lets go of the body it sent (issue 25, item 8): no attempt follows the commit, so
 * nothing reads it again, and an open stream then holds its answer's buffers, not its prompt. Emptied in place,
 * since the prepared call is also held by the failover loop's frames. got keeps the body twice for the stream's
 * whole life (got 14): in its options, and in the option objects it merged them from (`_init`, kept for retries).
 */
export function forgetSentBody(outgoing: OutgoingRequest, upstream: Readable): void {
  (outgoing as { body: string }).body = '';
  const options = (upstream as { options?: GotRequestOptions }).options;
  if (options === undefined) return;
  options.body = undefined;
  for (const init of options._init ?? []) if ('body' in init) init['body'] = undefined;
}
