import type { ServerResponse } from 'node:http';
import type { ErrorBody } from '../generated/types/error-envelope.js';
import { SseParser } from '../wire/sse-parser.js';
import { isObject } from './inbound-fields.js';

/** Frames from the engine's reader hold events it already bounded (max_upstream_body_bytes); this only guards the parser. */
const MAX_FRAME_CHARS = 64 * 1024 * 1024;

/** What an inbound stream writer does with each chat event. */
export interface ChatEventHandlers {
  /** A chat.completion.chunk. */
  chunk(data: Record<string, unknown>): string;
  /** `[DONE]`: the answer is complete. */
  done(): string;
  /** The gateway's error event (the provider's, or the engine's) ending the stream. */
  error(body: ErrorBody): string;
  /** True once the writer has ended its stream: later events are ignored. */
  finished(): boolean;
}

/** Reads chat frames into the writer's own; `unsent()` takes what a read made before a handler threw. */
export interface ChatEventReader {
  /** The writer's frames for `text`, after `opening` (frames the writer made for this read before it). */
  (text: string, opening?: string): string;
  /**
   * Frames made by a read that did not return (a handler threw: an answer over its limit), taken once: a writer
   * that numbers its events (Responses) sends them before its final error event, so no number is skipped.
   */
  unsent(): string;
}

/** Reads the chat frames the engine hands an inbound writer, event by event, into the writer's own frames. */
export function chatEventReader(handlers: ChatEventHandlers): ChatEventReader {
  const parser = new SseParser(MAX_FRAME_CHARS);
  let made = '';
  const take = () => {
    const frames = made;
    made = '';
    return frames;
  };
  const read = (text: string, opening = ''): string => {
    made = opening;
    for (const message of parser.push(Buffer.from(text, 'utf8'))) {
      if (message.kind !== 'event' || handlers.finished()) continue;
      if (message.data === '[DONE]') {
        made += handlers.done();
        continue;
      }
      const data = parsed(message.data);
      if (!isObject(data)) continue;
      made += isObject(data['error']) ? handlers.error(data['error'] as unknown as ErrorBody) : handlers.chunk(data);
    }
    return take();
  };
  return Object.assign(read, { unsent: take });
}

/**
 * The choice of a chat chunk an inbound stream writer answers from: the chunk's first choice when it is choice 0.
 * These formats carry one answer, so a provider's other choices (Gemini candidates, never asked for here) are not
 * mixed into it.
 */
export function answerChoice(chunk: Record<string, unknown>): Record<string, unknown> | undefined {
  const choices = chunk['choices'];
  const choice = Array.isArray(choices) && isObject(choices[0]) ? choices[0] : undefined;
  return choice && (choice['index'] ?? 0) === 0 ? choice : undefined;
}

/** A whole chat answer's text, parsed; undefined when it is not JSON. */
export function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Writes a JSON answer as the whole response. */
export function writeJson(res: ServerResponse, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.setHeader('content-length', Buffer.byteLength(text));
  res.end(text);
}
