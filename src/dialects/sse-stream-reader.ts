import { SseParser } from '../engine/sse-parser.js';
import type { StreamReader, StreamStep, StreamTranslator } from './dialect.js';

/**
 * The framing both dialects' streams use today (text/event-stream). Until a step has carried something for
 * the caller, a read is cut after its first event and its messages are translated one at a time as the
 * engine asks, so the first event is parsed, translated and flushed before the rest of its read is touched.
 * After that, each read's steps come as one array (no generator per read on the hot path), up to the end.
 */
export function sseStreamReader(translator: StreamTranslator, maxEventChars: number): StreamReader {
  const parser = new SseParser(maxEventChars);
  let sentFrames = false;

  function* firstReads(chunk: Buffer): Generator<StreamStep> {
    for (const piece of splitAfterFirstEvent(chunk)) {
      for (const message of parser.push(piece)) {
        const step = translator.translate(message);
        if (step.frames !== '') sentFrames = true;
        yield step;
      }
    }
  }

  return {
    read(chunk) {
      if (!sentFrames) return firstReads(chunk);
      const steps: StreamStep[] = [];
      for (const message of parser.push(chunk)) {
        const step = translator.translate(message);
        steps.push(step);
        if (step.end) break;
      }
      return steps;
    },
    end() {
      parser.end();
    },
  };
}

/** The read cut after its first blank line (the end of its first event), or whole when it has none. */
function splitAfterFirstEvent(chunk: Buffer): Buffer[] {
  const lf = chunk.indexOf('\n\n');
  const crlf = lf >= 0 ? -1 : chunk.indexOf('\r\n\r\n');
  const end = lf >= 0 ? lf + 2 : crlf >= 0 ? crlf + 4 : chunk.length;
  return end < chunk.length ? [chunk.subarray(0, end), chunk.subarray(end)] : [chunk];
}
