// What streams.ts and its load processes (stream-load.ts) say to each other over IPC, and the histogram both read.

export type StreamLoadCommand =
  | { readonly type: 'open'; readonly url: string; readonly body: string; readonly headers: Readonly<Record<string, string>>; readonly streams: number; readonly perSecond: number; readonly events: number; readonly localAddress: string }
  | { readonly type: 'measure' }
  | { readonly type: 'stop' }
  | { readonly type: 'finish' };

export type StreamLoadReply =
  | { readonly type: 'ready' }
  /** Every stream of this process has its response head (or has failed). */
  | { readonly type: 'opened' }
  | { readonly type: 'window'; readonly events: number; readonly addedGap: number[]; readonly latency: number[]; readonly openNow: number }
  | { readonly type: 'finished'; readonly completed: number; readonly errors: [string, number][] };

/** Histogram buckets of 50 µs from -200 ms to +2,000 ms; values outside land in the first or the last. */
const BUCKET_MICROS = 50;
const LOWEST_MICROS = -200_000;
export const HISTOGRAM_BUCKETS = (2_200_000 / BUCKET_MICROS) | 0;

export function histogramBucket(micros: number): number {
  const bucket = Math.floor((micros - LOWEST_MICROS) / BUCKET_MICROS);
  return bucket < 0 ? 0 : bucket >= HISTOGRAM_BUCKETS ? HISTOGRAM_BUCKETS - 1 : bucket;
}

/** Adds `more` into `sum` (same length). */
export function addHistogram(sum: number[], more: readonly number[]): void {
  for (let i = 0; i < more.length; i++) sum[i] = (sum[i] ?? 0) + more[i]!;
}

/** The p-th percentile of a histogram, in ms (the bucket's upper edge). */
export function histogramPercentileMs(histogram: readonly number[], p: number): number {
  const count = histogram.reduce((a, b) => a + b, 0);
  if (count === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * count);
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i]!;
    if (seen >= rank) return (LOWEST_MICROS + (i + 1) * BUCKET_MICROS) / 1000;
  }
  return Number.NaN;
}
