import { StringDecoder } from 'node:string_decoder';
import { EventTooLargeError } from './event-too-large.js';

/** One dispatched server-sent event, or a comment line (`: keep-alive`). */
export type SseMessage =
  | { readonly kind: 'event'; readonly event: string | undefined; readonly data: string; readonly id: string | undefined }
  | { readonly kind: 'comment'; readonly text: string };

/** Frames a dialect made itself from events its FastLane took whole: relayed as they are. */
export interface RelayedFrames {
  readonly kind: 'relay';
  readonly frames: string;
  /** The answer text characters in frames, when the lane counted them (FastLane.take). */
  readonly textChars: number | undefined;
}

/**
 * A dialect's shortcut for the events it sees most. At a line start with nothing pending, it may take the
 * complete events that follow (single `data:` lines ended by a blank line, within this read, LF only) and
 * give their frames itself; parsing goes on after them. It must give exactly what the parser and the
 * dialect's translator would have.
 */
export interface FastLane {
  /**
   * The frames of the events it takes from `at`, and the index past the last one; undefined when it takes none.
   * `textChars`, when the lane counted it on its way: what the engine's count of answer text would find in the frames.
   */
  take(text: string, at: number): { readonly frames: string; readonly end: number; readonly textChars?: number | undefined } | undefined;
}

/** An event larger than the parser may hold. */
export class SseEventTooLargeError extends EventTooLargeError {
  constructor(limit: number) {
    super(limit);
    this.name = 'SseEventTooLargeError';
  }
}

const LINE_BREAK = /\r\n|\r|\n/g;

/**
 * An incremental parser for the text/event-stream format as the WHATWG spec defines it:
 * events split across reads, many events in one read, CRLF/CR/LF line ends, UTF-8 characters
 * split across reads, multi-line data fields, a byte-order mark opening the stream. Holds at most
 * `maxEventChars` of one event.
 */
export class SseParser {
  private readonly decoder = new StringDecoder('utf8');
  private partialLine = '';
  /** A read ended in CR: a LF opening the next read belongs to the same line break. */
  private skipLeadingLf = false;
  private data = '';
  private eventName: string | undefined;
  private eventId: string | undefined;
  private sawDataField = false;
  /** No character decoded yet: a byte-order mark opening the stream is not part of its first line. */
  private atStreamStart = true;
  /** An event over the limit, held until the messages of its read are handed on (see pushWithLane). */
  private tooLarge: SseEventTooLargeError | undefined;

  constructor(
    private readonly maxEventChars: number,
    private readonly fastLane?: FastLane,
  ) {}

  /** Parses one read; returns the messages it completed, in order. */
  push(chunk: Buffer): SseMessage[] {
    // Without a fast lane nothing is relayed.
    return this.pushWithLane(chunk) as SseMessage[];
  }

  /**
   * Parses one read; returns the messages it completed and the frames the fast lane made, in stream order. An event
   * over `maxEventChars` found after other messages of the same read is thrown at the next read (or at the end), so
   * the messages before it are still handed on; nothing of it is kept meanwhile.
   */
  pushWithLane(chunk: Buffer): (SseMessage | RelayedFrames)[] {
    if (this.tooLarge) throw this.tooLarge;
    const out: (SseMessage | RelayedFrames)[] = [];
    try {
      this.parseInto(chunk, out);
    } catch (error) {
      if (!(error instanceof SseEventTooLargeError) || out.length === 0) throw error;
      this.tooLarge = error;
      this.partialLine = '';
      this.data = '';
      this.sawDataField = false;
      this.eventName = undefined;
    }
    return out;
  }

  private parseInto(chunk: Buffer, out: (SseMessage | RelayedFrames)[]): void {
    let text = this.decoder.write(chunk);
    if (this.atStreamStart && text.length > 0) {
      // The spec ignores one U+FEFF at the very start; kept, it would hide the first field name (`\uFEFFdata`).
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      this.atStreamStart = false;
    }
    if (this.skipLeadingLf && text.length > 0) {
      if (text.charCodeAt(0) === 0x0a) text = text.slice(1);
      this.skipLeadingLf = false;
    }
    let start = 0;
    if (!text.includes('\r')) {
      // Almost every provider ends lines with LF alone: a plain search is much cheaper than the regex.
      const lane = this.fastLane;
      for (;;) {
        if (lane !== undefined && this.partialLine === '' && !this.sawDataField && this.eventName === undefined) {
          const taken = lane.take(text, start);
          if (taken !== undefined) {
            out.push({ kind: 'relay', frames: taken.frames, textChars: taken.textChars });
            start = taken.end;
          }
        }
        const lf = text.indexOf('\n', start);
        if (lf < 0) break;
        this.processLine(this.takeLine(text, start, lf), out);
        start = lf + 1;
      }
    } else {
      LINE_BREAK.lastIndex = 0;
      for (let match = LINE_BREAK.exec(text); match; match = LINE_BREAK.exec(text)) {
        // A CR that ends this read may be the first half of a CRLF split across reads.
        if (match[0] === '\r' && match.index === text.length - 1) this.skipLeadingLf = true;
        this.processLine(this.takeLine(text, start, match.index), out);
        start = match.index + match[0].length;
      }
    }
    if (start < text.length) {
      this.partialLine += text.slice(start);
      if (this.partialLine.length + this.data.length > this.maxEventChars) throw new SseEventTooLargeError(this.maxEventChars);
    }
    this.detachFromRead(text.length);
  }

  /**
   * What waits for the next read (an unfinished line or event, the last event id) is copied out of this read's
   * text: a slice would keep the whole read alive (up to 64 KiB) for as long as a slow caller holds the stream.
   * Only what is shorter than the read is copied, so copying stays linear in what the provider sends (an event
   * spread over many reads is not copied again with each); what is longer keeps at most its own size alive.
   */
  private detachFromRead(readLength: number): void {
    if (this.partialLine !== '') this.partialLine = detachedIfShorter(this.partialLine, readLength);
    if (this.data !== '') this.data = detachedIfShorter(this.data, readLength);
    if (this.eventName !== undefined) this.eventName = detachedIfShorter(this.eventName, readLength);
    if (this.eventId !== undefined) this.eventId = detachedIfShorter(this.eventId, readLength);
  }

  /** The stream ended: an event without its closing blank line is incomplete and is dropped, as the spec says. */
  end(): SseMessage[] {
    if (this.tooLarge) throw this.tooLarge;
    this.decoder.end();
    return [];
  }

  /** The line from `start` to `end` of this read, joined to what an earlier read left unfinished. */
  private takeLine(text: string, start: number, end: number): string {
    if (this.partialLine === '') return text.slice(start, end);
    const line = this.partialLine + text.slice(start, end);
    this.partialLine = '';
    return line;
  }

  private processLine(line: string, out: (SseMessage | RelayedFrames)[]): void {
    if (line === '') {
      this.dispatch(out);
      return;
    }
    if (line.startsWith('data: ')) {
      this.appendData(line.slice(6));
      return;
    }
    const colon = line.indexOf(':');
    if (colon === 0) {
      out.push({ kind: 'comment', text: line.slice(1).trimStart() });
      return;
    }
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    switch (field) {
      case 'data':
        this.appendData(value);
        break;
      case 'event':
        this.eventName = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.eventId = value;
        break;
      default:
        // `retry` and unknown fields carry nothing a chat client needs.
        break;
    }
  }

  private appendData(value: string): void {
    this.data = this.sawDataField ? `${this.data}\n${value}` : value;
    this.sawDataField = true;
    if (this.data.length > this.maxEventChars) throw new SseEventTooLargeError(this.maxEventChars);
  }

  private dispatch(out: (SseMessage | RelayedFrames)[]): void {
    if (this.sawDataField) out.push({ kind: 'event', event: this.eventName, data: this.data, id: this.eventId });
    this.data = '';
    this.eventName = undefined;
    this.sawDataField = false;
  }
}

/**
 * A flat copy of `text` that shares no memory with the string it was sliced from (a UTF-16 round trip, exact
 * for any string), when it is shorter than `limit`; else `text` itself.
 */
function detachedIfShorter(text: string, limit: number): string {
  return text.length < limit ? Buffer.from(text, 'utf16le').toString('utf16le') : text;
}
