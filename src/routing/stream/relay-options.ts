import type { ServerResponse } from 'node:http';
import type { StreamHoldings } from '../../dialects/stream-budget.js';
import type { AnswerDescription, StreamReader, StreamReaderContext } from '../../dialects/dialect.js';
import type { ErrorRuleSet } from '../../generated/types/route-tables.js';
import type { RequestRecord } from '../../observe/request-log.js';
import type { StreamFrames } from '../answer-writer.js';
import type { RuntimeProvider } from '../runtime-providers.js';
import type { UpstreamReply } from '../upstream.js';

/**
 * How long, and how many bytes, the provider's stream is still read after the caller left, for the usage it reports
 * at its end (docs/callers.md): the answer is charged that usage, or an estimate when it does not come in time.
 */
export const USAGE_TAIL_MS = 5000;
export const USAGE_TAIL_BYTES = 1024 * 1024;

/** What relayStream is given for one stream: the attempt's provider and reply, the caller's response, and its hooks. */
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
