import { fstatSync } from 'node:fs';
import { destination as pinoDestination, type DestinationStream } from 'pino';

/** Request lines are gathered until this many characters are waiting, then written in one system call. */
const LOG_BATCH_CHARS = 4096;
/** A quiet gateway's request lines still reach stdout within this long. */
export const LOG_FLUSH_EVERY_MS = 1000;
/**
 * How a request line ends (pino writes the message last; request-log.ts logs each request with msg "request"):
 * only these wait in the batch. A warning, an error or a lifecycle line (listening, draining, store down) is
 * written at once, with the request lines waiting before it, so it is on stdout when it happens.
 */
const REQUEST_LINE_END = ',"msg":"request"}\n';
/**
 * What may wait while stdout does not take data (a stalled pipe or collector): past it, lines are dropped whole
 * and counted (gateway_log_lines_dropped_total), so a stuck log reader costs bounded memory, never the process.
 */
export const LOG_BUFFER_MAX_BYTES = 8 * 1024 * 1024;

export interface LogOutput {
  readonly stream: DestinationStream;
  /** Lines dropped so far because LOG_BUFFER_MAX_BYTES were already waiting (or stdout failed). */
  dropped(): number;
  /** Writes what waits, at once (before process.exit). */
  flushNow(): void;
}

/**
 * JSON lines to a file descriptor, request lines batched: pino's default destination issues one write per line,
 * which cost 8% of the main thread under load. Lines wait here as a list and go to sonic-boom joined, one batch per write:
 * sonic-boom's own batching (minLength) measures its whole waiting string on every line, copying it again each
 * time. A regular file is written synchronously (as nginx writes its access log): a page-cache write takes
 * microseconds, where an asynchronous one hands each batch to a pool thread and wakes the loop when it is done.
 * A pipe or a terminal is written asynchronously, so a stalled reader never blocks the loop.
 */
export function batchedLogOutput(fd = 1, maxBytes = LOG_BUFFER_MAX_BYTES): LogOutput {
  const destination = pinoDestination({ dest: fd, sync: isRegularFile(fd), minLength: 0, maxLength: maxBytes });
  let waiting: string[] = [];
  let waitingChars = 0;
  /** Lines in the batch being handed to sonic-boom: what a drop or a failed write loses. */
  let handing = 0;
  let dropped = 0;
  const lose = () => {
    dropped += handing;
    handing = 0; // pino re-emits an error other than EPIPE on the same stream: count the batch once
  };
  destination.on('drop', lose);
  // A failed write (a closed pipe, a full disk) must never take the process down; a synchronous one (a file)
  // counts its batch as dropped, an asynchronous one cannot tell how many lines it held.
  let failing = false;
  destination.on('error', () => {
    failing = true;
    lose();
  });
  destination.on('write', () => (failing = false));

  const flush = () => {
    if (waiting.length === 0) return;
    const text = waiting.length === 1 ? waiting[0]! : waiting.join('');
    handing = waiting.length;
    waiting = [];
    waitingChars = 0;
    destination.write(text);
    handing = 0;
  };
  setInterval(flush, LOG_FLUSH_EVERY_MS).unref();
  const flushNow = () => {
    flush();
    // sonic-boom's flushSync retries a write that fails with anything but EAGAIN forever (every 100 ms): a stdout
    // that refuses writes (a full disk, a bad descriptor) would hang the exit. What waits is lost with the process.
    if (failing) return;
    try {
      destination.flushSync();
    } catch {
      // A write already under way (or an fd that went away): what it holds is lost with the process.
    }
  };
  // An exit that skips the drain (a crash, process.exit elsewhere) still writes the lines waiting here.
  process.once('exit', flushNow);

  const wait = (line: string) => {
    waiting.push(line);
    waitingChars += line.length;
    if (waitingChars >= LOG_BATCH_CHARS) flush();
  };
  const stream = {
    write(line: string) {
      if (line.endsWith(REQUEST_LINE_END)) wait(line);
      else {
        waiting.push(line);
        flush();
      }
    },
    /**
     * A line known to be a request line (info-line.ts, mayWait): it waits without its end being read, which would
     * copy a line built from parts into one string (~0.6 KB per request), as the batch's join does anyway.
     */
    writeWaiting: wait,
    /** pino's logger.flush(cb): what waits here, then what waits in sonic-boom, `done` once it is written. */
    flush(done: (error?: Error) => void) {
      flush();
      destination.flush(done);
    },
  };
  return { stream, dropped: () => dropped, flushNow };
}

function isRegularFile(fd: number): boolean {
  try {
    return fstatSync(fd).isFile();
  } catch {
    return false;
  }
}
