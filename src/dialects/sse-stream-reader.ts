import { SseParser, type FastLane, type RelayedFrames, type SseMessage } from '../wire/sse-parser.js';
import type { StreamReader, StreamStep, StreamTranslator } from './dialect.js';

const NONE: readonly (SseMessage | RelayedFrames)[] = [];
const HELD: StreamStep = { frames: '' };

/**
 * The framing both dialects' streams use today (text/event-stream). Messages are translated one at a time,
 * as the engine pulls them. Until a step has carried something for the caller, a read is cut after its
 * first event, so that event is parsed and translated alone and can be sent before the rest is parsed.
 * A dialect's fast lane (see FastLane) may relay the events it knows without a message or a translation each.
 * Comments (keep-alives) before the first frames carry nothing for the caller and are held back, so the stream
 * is not committed by them: an error right after them can still fail over. What a translator still owes for its
 * last message (owed()) is taken piece by piece before the next message.
 */
export function sseStreamReader(translator: StreamTranslator, maxEventChars: number, fastLane?: FastLane): StreamReader {
  const parser = new SseParser(maxEventChars, fastLane);
  let sentFrames = false;
  let messages = NONE;
  let at = 0;
  /** The second part of a read cut after its first event, parsed once the first is taken. */
  let rest: Buffer | undefined;
  const owed = translator.owed?.bind(translator);
  const describe = translator.describe?.bind(translator);
  return {
    ...(describe ? { describe } : {}),
    push(chunk) {
      if (sentFrames) {
        messages = parser.pushWithLane(chunk);
      } else {
        const [first, second] = splitAfterFirstEvent(chunk);
        messages = parser.pushWithLane(first);
        rest = second;
      }
      at = 0;
    },
    next() {
      if (owed !== undefined) {
        const step = owed();
        if (step !== undefined) {
          if (step.frames !== '') sentFrames = true;
          return step;
        }
      }
      while (at === messages.length) {
        if (rest === undefined) {
          // Nothing is kept from a read once it is taken: its messages are slices of its text.
          messages = NONE;
          at = 0;
          return undefined;
        }
        messages = parser.pushWithLane(rest);
        rest = undefined;
        at = 0;
      }
      const message = messages[at++]!;
      if (!sentFrames && message.kind === 'comment') return HELD;
      // A relayed run is a step as it is (its frames and the text they hold).
      const step = message.kind === 'relay' ? message : translator.translate(message);
      if (step.frames !== '') sentFrames = true;
      return step;
    },
    end() {
      parser.end();
      return translator.end?.();
    },
  };
}

/** The read cut after its first blank line (the end of its first event); the second part is undefined when there is nothing after it. */
function splitAfterFirstEvent(chunk: Buffer): [Buffer, Buffer | undefined] {
  const lf = chunk.indexOf('\n\n');
  const crlf = lf >= 0 ? -1 : chunk.indexOf('\r\n\r\n');
  const end = lf >= 0 ? lf + 2 : crlf >= 0 ? crlf + 4 : chunk.length;
  return end < chunk.length ? [chunk.subarray(0, end), chunk.subarray(end)] : [chunk, undefined];
}
