import type { Readable } from 'node:stream';
import type { OutgoingRequest } from '../dialects/dialect.js';

/**
 * A committed stream's call lets go of the body it sent (issue 25, item 8): no attempt follows the commit, so
 * nothing reads it again, and an open stream then holds its answer's buffers, not its prompt. Emptied in place,
 * since the prepared call is also held by the failover loop's frames; got keeps its request's options (the body
 * among them) for the stream's whole life.
 */
export function forgetSentBody(outgoing: OutgoingRequest, upstream: Readable): void {
  (outgoing as { body: string }).body = '';
  const options = (upstream as { options?: { body?: unknown } }).options;
  if (options !== undefined) options.body = undefined;
}
