import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** One chat.completion.chunk as OpenAI streams it, with the upstream's own model name. */
export function chunk(upstreamModel: string, delta: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    id: 'chatcmpl-stream1',
    object: 'chat.completion.chunk',
    created: 1_763_700_000,
    model: upstreamModel,
    system_fingerprint: 'fp_44709d6fcb',
    service_tier: 'default',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: null }],
    ...extra,
  };
}

/** A text/event-stream body: one `data:` event per item, then `[DONE]` unless told otherwise. */
export function sseBody(events: readonly unknown[], options: { done?: boolean; eol?: string } = {}): string {
  const eol = options.eol ?? '\n';
  const frames = events.map((event) => `data: ${typeof event === 'string' ? event : JSON.stringify(event)}${eol}${eol}`);
  if (options.done ?? true) frames.push(`data: [DONE]${eol}${eol}`);
  return frames.join('');
}

export function startEventStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

/** Writes `pieces` one by one with a pause between, so the gateway sees them as separate reads. */
export async function writeInPieces(res: ServerResponse, pieces: readonly (string | Buffer)[], pauseMs = 2): Promise<void> {
  for (const piece of pieces) {
    res.write(piece);
    await sleep(pauseMs);
  }
}

/** Cuts `text` into pieces of `size` bytes, so UTF-8 characters and lines split between reads. */
export function bytePieces(text: string, size: number): Buffer[] {
  const bytes = Buffer.from(text);
  const pieces: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.subarray(i, i + size));
  return pieces;
}

/** Reads an SSE response body into its `data:` payloads. */
export async function readDataEvents(response: Response): Promise<string[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => frame.split('\n').map((line) => line.slice('data: '.length)).join('\n'));
}
