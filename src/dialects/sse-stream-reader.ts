import { SseParser } from '../engine/sse-parser.js';
import type { StreamReader, StreamStep, StreamTranslator } from './dialect.js';

/**
 * The framing both dialects' streams use today (text/event-stream): each read is parsed into messages
 * and each message translated only when the engine asks for the next step. Until a step has carried
 * something for the caller, a read is cut after its first event, so that event is parsed, translated
 * and flushed before the rest of the read is even parsed.
 */
export function sseStreamReader(translator: StreamTranslator, maxEventChars: number): StreamReader {
  const parser = new SseParser(maxEventChars);
  let sentFrames = false;
  return {
    *read(chunk) {
      for (const piece of sentFrames ? [chunk] : splitAfterFirstEvent(chunk)) {
        for (const message of parser.push(piece)) {
          const step: StreamStep = translator.translate(message);
          if (step.frames !== '') sentFrames = true;
          yield step;
        }
      }
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
