import type { ErrorBody } from '../generated/types/error-envelope.js';

/** One SSE event carrying `data`; a data value with line breaks becomes several data lines, as the format requires. */
export function sseData(data: string): string {
  return data.includes('\n') ? `data: ${data.replaceAll('\n', '\ndata: ')}\n\n` : `data: ${data}\n\n`;
}

/** The final event of a stream that ends in an error: the gateway's envelope and nothing else. */
export function sseError(body: ErrorBody): string {
  return sseData(JSON.stringify({ error: body }));
}

export const SSE_DONE = 'data: [DONE]\n\n';
