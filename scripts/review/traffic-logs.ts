import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import type { ModelTokens, TrafficCell, TrafficData } from './traffic.js';

/** Distinct routing string x caller pairs kept: the log holds callers' own strings, so a bound is needed. */
const MAX_PAIRS = 100_000;
/** A line longer than this is no request line of the gateway's (and is not parsed). */
const MAX_LINE_CHARS = 64 * 1024;

/**
 * Traffic from the gateway's JSON log lines (`msg: "request"`; plain or .gz, by the file's first bytes), read as a
 * stream, one line at a time: memory is bounded by the pairs counted, not the files' size. Lines older than the
 * window, other messages, pretty-format lines and anything unparsable are skipped and counted.
 */
export async function trafficFromLogs(paths: readonly string[], windowMs: number, now = Date.now()): Promise<TrafficData & { skipped: number; dropped: number }> {
  const since = now - windowMs;
  const pairs = new Map<string, { model: string; caller: string; requests: number; costUsd: number }>();
  const tokens = new Map<string, ModelTokens>();
  let lines = 0;
  let skipped = 0;
  let dropped = 0;
  for (const path of paths) {
    for await (const line of readLines(path)) {
      const record = parseRequestLine(line, since);
      if (!record) {
        if (line.trim() !== '') skipped++;
        continue;
      }
      lines++;
      const key = `${record.caller}\u0000${record.model}`;
      let pair = pairs.get(key);
      if (!pair) {
        if (pairs.size >= MAX_PAIRS) {
          dropped++;
          continue;
        }
        pairs.set(key, (pair = { model: record.model, caller: record.caller, requests: 0, costUsd: 0 }));
      }
      pair.requests++;
      pair.costUsd += record.costUsd;
      let counted = tokens.get(record.model);
      if (!counted && tokens.size < MAX_PAIRS) tokens.set(record.model, (counted = { prompt: 0, cached: 0, completion: 0 }));
      if (counted) {
        counted.prompt += record.prompt;
        counted.cached += record.cached;
        counted.completion += record.completion;
      }
    }
  }
  const files = paths.length === 1 ? basename(paths[0]!) : `${paths.length} log files`;
  const cells: TrafficCell[] = [...pairs.values()];
  return { source: `${files} (${lines.toLocaleString('en-US')} request lines)`, cells, tokens, skipped, dropped };
}

async function* readLines(path: string): AsyncGenerator<string> {
  const gzip = await startsWithGzipMagic(path);
  const raw = createReadStream(path);
  const input = gzip ? raw.pipe(createGunzip()) : raw;
  raw.on('error', (error) => input.destroy(error));
  for await (const line of createInterface({ input, crlfDelay: Infinity })) yield line;
}

async function startsWithGzipMagic(path: string): Promise<boolean> {
  const stream = createReadStream(path, { start: 0, end: 1 });
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  const head = Buffer.concat(chunks);
  return head.length === 2 && head[0] === 0x1f && head[1] === 0x8b;
}

interface RequestLine {
  readonly model: string;
  readonly caller: string;
  readonly costUsd: number;
  readonly prompt: number;
  readonly cached: number;
  readonly completion: number;
}

/** A request line of the window with a routing string, or null. */
function parseRequestLine(line: string, since: number): RequestLine | null {
  if (!line.startsWith('{') || line.length > MAX_LINE_CHARS || !line.includes('"msg":"request"')) return null;
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (record['msg'] !== 'request' || typeof record['model'] !== 'string') return null;
  const time = typeof record['time'] === 'number' ? record['time'] : typeof record['time'] === 'string' ? Date.parse(record['time']) : Number.NaN;
  if (!Number.isFinite(time) || time < since) return null;
  const figure = (key: string) => {
    const value = record[key];
    return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
  };
  return {
    model: record['model'],
    caller: typeof record['caller'] === 'string' ? record['caller'] : '',
    costUsd: figure('cost_usd'),
    prompt: figure('prompt_tokens'),
    cached: figure('cached_tokens'),
    completion: figure('completion_tokens'),
  };
}
