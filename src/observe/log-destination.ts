import { destination as pinoDestination, type DestinationStream } from 'pino';

/** Lines are gathered until this many bytes are waiting, then written in one system call. */
export const LOG_BATCH_BYTES = 4096;
/** A quiet gateway's lines still reach stdout within this long. */
export const LOG_FLUSH_EVERY_MS = 1000;
/**
 * What may wait while stdout does not take data (a stalled pipe or collector): past it, lines are dropped whole
 * and counted (gateway_log_lines_dropped_total), so a stuck log reader costs bounded memory, never the process.
 */
export const LOG_BUFFER_MAX_BYTES = 8 * 1024 * 1024;

export interface LogOutput {
  readonly stream: DestinationStream;
  /** Lines dropped so far because LOG_BUFFER_MAX_BYTES were already waiting. */
  dropped(): number;
  /** Writes what waits, at once (before process.exit). */
  flushNow(): void;
}

/**
 * JSON lines to a file descriptor, batched: pino's default destination issues one write per line, which cost
 * 8% of the main thread under load. pino flushes it on exit.
 */
export function batchedLogOutput(fd = 1, maxBytes = LOG_BUFFER_MAX_BYTES): LogOutput {
  const destination = pinoDestination({ dest: fd, sync: false, minLength: LOG_BATCH_BYTES, maxLength: maxBytes, periodicFlush: LOG_FLUSH_EVERY_MS });
  let dropped = 0;
  destination.on('drop', () => dropped++);
  return {
    stream: destination,
    dropped: () => dropped,
    flushNow() {
      try {
        destination.flushSync();
      } catch {
        // A write already under way (or an fd that went away): pino's exit hook writes what remains.
      }
    },
  };
}
