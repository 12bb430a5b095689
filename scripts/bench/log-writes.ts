// `npm run bench:log` (issue 25, item 1): CPU per request-log line, pino's default destination (one write(2) per
// line) beside the gateway's batched destination (src/observe/log-destination.ts), to a file and to a pipe.
// Each measurement is a child process of its own writing BENCH_LOG_LINES lines shaped like the gateway's request
// log line through pino; its CPU time (user + system, process.cpuUsage) from the first line to the last flush,
// divided by the lines, is the figure. Modes alternate round by round, so load on a shared machine hits both.
import { fork } from 'node:child_process';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { destination as pinoDestination, pino } from 'pino';
import { batchedLogOutput } from '../../src/observe/log-destination.js';
import { describeMachine, packageVersion } from './report.js';

const pinoVersion = packageVersion('pino');

const LINES = Number(process.env['BENCH_LOG_LINES'] ?? 100_000);
const ROUNDS = Number(process.env['BENCH_LOG_ROUNDS'] ?? 5);
const MODES = ['none', 'per-line', 'batched'] as const;
const SINKS = ['file', 'pipe'] as const;
type Mode = (typeof MODES)[number];
type Sink = (typeof SINKS)[number];

/** A line as the gateway logs a served request (fields from src/observe/request-log.ts, no content). */
const FIELDS = {
  request_id: 'req_3f2a9c1e7b5d4a60b1c2d3e4',
  method: 'POST',
  path: '/v1/chat/completions',
  model: 'bench/llama3.2',
  provider: 'bench',
  endpoint: 'a',
  upstream_model: 'llama3.2',
  caller: 'bench-caller',
  stream: false,
  status: 200,
  outcome: 'ok',
  attempts: [{ provider: 'bench', endpoint: 'a', status: 200, ms: 1.2 }],
  prompt_tokens: 12,
  completion_tokens: 20,
  total_tokens: 32,
  cost_usd: 0.0000123,
  duration_ms: 1.8,
  upstream_ms: 1.2,
};

if (process.argv[2] === '--child') {
  await child(process.argv[3] as Mode, Number(process.argv[4]));
} else {
  await main();
}

async function child(mode: Mode, fd: number): Promise<void> {
  const output = mode === 'batched' ? batchedLogOutput(fd) : null;
  const destination = output?.stream ?? pinoDestination({ dest: fd, sync: false });
  const logger = pino({ base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
  for (let i = 0; i < 2_000; i++) logger.info(FIELDS, 'request'); // JIT warm-up, not counted
  output?.flushNow();
  const start = process.cpuUsage();
  const log = mode !== 'none';
  for (let i = 0; i < LINES; i++) {
    if (log) logger.info(FIELDS, 'request');
    // One line per turn of the event loop, as a gateway logs one line per answered request.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await new Promise<void>((resolve) => (destination as unknown as { flush(cb: () => void): void }).flush(() => resolve()));
  const used = process.cpuUsage(start);
  process.send?.({ usPerLine: (used.user + used.system) / LINES });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-log-'));
  const results = new Map<string, number[]>();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const sink of SINKS) {
        for (const mode of round % 2 === 0 ? MODES : [...MODES].reverse()) {
          const path = join(dir, `${mode}-${round}.log`);
          const value = await measure(mode, sink, path);
          rmSync(path, { force: true });
          const key = `${sink} ${mode}`;
          results.set(key, [...(results.get(key) ?? []), value]);
          process.stderr.write(`round ${round + 1}: ${key} ${value.toFixed(2)} µs per line\n`);
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`${describeMachine(`pino ${pinoVersion}`).join('\n')}\n${LINES.toLocaleString('en')} lines per round, ${ROUNDS} rounds, modes alternating\n\n`);
  process.stdout.write('| Sink | pino default (one write per line) | batched (4 KiB, 1 s flush) | batched ÷ default |\n|---|---:|---:|---:|\n');
  for (const sink of SINKS) {
    // The loop's own cost (a turn per line, no logging) is taken out, leaving the logging's.
    const none = median(results.get(`${sink} none`) ?? []);
    const perLine = median(results.get(`${sink} per-line`) ?? []) - none;
    const batched = median(results.get(`${sink} batched`) ?? []) - none;
    process.stdout.write(`| ${sink} | ${perLine.toFixed(2)} µs | ${batched.toFixed(2)} µs | ${(batched / perLine).toFixed(2)}× |\n`);
  }
  process.stdout.write('\nCPU (user + system) of the writing process per line, median over the rounds, minus the same loop without logging.\n');
}

function measure(mode: Mode, sink: Sink, path: string): Promise<number> {
  const stdio: ('ignore' | 'pipe' | 'inherit' | 'ipc' | number)[] = ['ignore', 'ignore', 'inherit', 'ipc'];
  let fd = 1;
  if (sink === 'file') {
    stdio.push(openSync(path, 'w'));
    fd = 4;
  } else {
    stdio[1] = 'pipe';
  }
  const worker = fork(new URL(import.meta.url).pathname, ['--child', mode, String(fd)], { stdio });
  worker.stdout?.resume(); // the reader of the pipe: drains as fast as it can, as a log collector would
  return new Promise((resolve, reject) => {
    worker.once('message', (message: { usPerLine: number }) => resolve(message.usPerLine));
    worker.once('exit', (code) => (code ? reject(new Error(`bench:log child exited ${code}`)) : undefined));
  });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}
