import { readFileSync } from 'node:fs';
import { createAnthropicStreamTranslator } from '../../src/dialects/anthropic/stream.js';
import type { StreamStep } from '../../src/dialects/dialect.js';
import { SseParser } from '../../src/wire/sse-parser.js';

export const ROUTING_MODEL = 'anthropic/claude-sonnet-4-5';

export function fixture(name: string): Buffer {
  return readFileSync(new URL(`../fixtures/anthropic/${name}`, import.meta.url));
}

/** What the caller receives for one upstream stream, as the relay would send it. */
export interface Relayed {
  readonly frames: string;
  readonly end: StreamStep['end'];
  /** The last usage a step carried: what the gateway's accounting keeps. */
  readonly usage: StreamStep['usage'];
}

/**
 * Feeds `bytes` through the real SseParser in reads of `pieceSize` bytes (whole when 0) and a fresh
 * translator, stopping at the first step that ends the stream, as relay-stream.ts does.
 */
export function relay(bytes: Buffer, pieceSize: number, includeUsage = false): Relayed {
  const parser = new SseParser(1 << 20);
  const translator = createAnthropicStreamTranslator({ routingModel: ROUTING_MODEL, providerId: 'anthropic', hideUsage: false, includeUsage });
  let frames = '';
  let usage: StreamStep['usage'];
  const size = pieceSize === 0 ? bytes.length : pieceSize;
  for (let at = 0; at < bytes.length; at += size) {
    for (const message of parser.push(bytes.subarray(at, at + size))) {
      // What a message still owes (blocks closed one by one) is taken before the next, as the shared reader does.
      for (let step: StreamStep | undefined = translator.translate(message); step !== undefined; step = translator.owed?.()) {
        frames += step.frames;
        if (step.usage) usage = step.usage;
        if (step.end) return { frames, end: step.end, usage };
      }
    }
  }
  return { frames, end: undefined, usage };
}

/** The events of the frames: parsed JSON, or the string `[DONE]`; each event must be one `data:` line. */
export function events(frames: string): unknown[] {
  if (!frames.endsWith('\n\n')) throw new Error(`frames do not end an event: ${JSON.stringify(frames.slice(-40))}`);
  return frames
    .slice(0, -2)
    .split('\n\n')
    .map((event) => {
      if (!event.startsWith('data: ') || event.includes('\n')) throw new Error(`not one data line: ${JSON.stringify(event)}`);
      const data = event.slice(6);
      return data === '[DONE]' ? data : (JSON.parse(data) as unknown);
    });
}
