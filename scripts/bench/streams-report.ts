// The report of `npm run bench:streams`: one row per stream count and target, the issue-40 line-5 verdicts for the
// gateway at the largest count (RSS per stream beside the raw proxy's, none dropped, /health, event-loop lag), how many streams fit under the shipped 512 MiB container limit, and the heap by
// class when --heap asked for it. Printed, and written to the STREAMS block of BENCHMARKS.md unless told not to.
import { TEMPLATE } from './bench-text.js';
import { fixed, int, mib } from './format.js';
import type { GatewayWatch } from './gateway-watch.js';
import type { ThreadTimes } from './thread-times.js';
import { describeMachine, writeBlock } from './report.js';

export interface StreamsResult {
  readonly target: string;
  /** Streams asked for; `streams` is fewer when the open-file limit held fewer, and `note` says why. */
  readonly requested: number;
  readonly streams: number;
  readonly note: string;
  /** The gateway's /health and event-loop lag from the first stream opened to the window's end; null for the proxies. */
  readonly watch: GatewayWatch | null;
  /** Streams the load side still had open when the window closed (all of them, unless some failed). */
  readonly openDuringWindow: number;
  readonly idleRss: number;
  /** Median RSS over the window (sampled every 250 ms). */
  readonly windowRss: number;
  readonly peakRss: number;
  readonly cpuPerEvent: number;
  /** CPU over the window as a share of one core. */
  readonly cpuShare: number;
  readonly eventsPerSecond: number;
  readonly addedGapP50: number;
  readonly addedGapP99: number;
  readonly latencyP50: number;
  readonly latencyP99: number;
  readonly completed: number;
  readonly errors: readonly [string, number][];
  readonly heap: { readonly total: number; readonly rows: readonly [string, number][] } | null;
}

export interface StreamsSettings {
  readonly paceMs: number;
  readonly windowSeconds: number;
  readonly openPerSecond: number;
  /** The prompt each stream's request carries (0: one short message). */
  readonly promptBytes: number;
  readonly write: boolean;
  readonly command: string;
}

const CONTAINER_LIMIT = 512 * 1024 * 1024;
const KIB_PER_STREAM_BUDGET = 64;
const HEALTH_BUDGET_MS = 50;
const LAG_P99_BUDGET_MS = 20;
const GAP_MARGIN_MS = 5;

const kibPerStream = (r: StreamsResult) => (r.windowRss - r.idleRss) / 1024 / r.streams;
const errorText = (r: StreamsResult) => (r.errors.length === 0 ? 'none' : r.errors.map(([kind, n]) => `${n}× ${kind}`).join(', '));

/** Streams one process holds under the container limit at the measured cost per stream (RSS at idle included). */
export function streamsUnderLimit(r: StreamsResult): number {
  return Math.floor((CONTAINER_LIMIT - r.idleRss) / ((r.windowRss - r.idleRss) / r.streams));
}

export function writeStreamsReport(results: readonly StreamsResult[], settings: StreamsSettings): void {
  const lines = [
    '## Open streams (`npm run bench:streams`)',
    '',
    ...describeMachine(
      `pace ${settings.paceMs} ms per chunk, ${settings.windowSeconds} s window with every stream open, opened at ${settings.openPerSecond}/s` +
        (settings.promptBytes > 0 ? `, each request a prompt of ~${int(settings.promptBytes)} bytes` : ''),
    ),
    `- Command: \`${settings.command}\``,
    '',
    '| Streams | Target | idle RSS (MiB) | RSS in window (MiB, median / peak) | **RSS per open stream (KiB)** | CPU per chunk (µs) | CPU (% of a core) | chunks/s | added gap p50 / **p99** (ms) | delay p50 / p99 (ms) | open in window | streams whole | errors |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of results) {
    lines.push(
      `| ${int(r.streams)} | ${r.target} | ${fixed(mib(r.idleRss), 0)} | ${fixed(mib(r.windowRss), 0)} / ${fixed(mib(r.peakRss), 0)} | **${fixed(kibPerStream(r), 1)}** | ${fixed(r.cpuPerEvent, 1)} | ${fixed(r.cpuShare * 100, 0)}% | ${int(r.eventsPerSecond)} | ${fixed(r.addedGapP50, 2)} / **${fixed(r.addedGapP99, 2)}** | ${fixed(r.latencyP50, 2)} / ${fixed(r.latencyP99, 2)} | ${int(r.openDuringWindow)} | ${int(r.completed)} of ${int(r.streams)} | ${errorText(r)} |`,
    );
  }
  lines.push('', "The gateway's RSS and CPU are its cluster worker's, the process that serves (the pid /health names), not the cluster primary's.");
  for (const note of new Set(results.map((r) => r.note).filter((n) => n !== ''))) lines.push(`- Open-file limit: ${note}.`);
  const largest = Math.max(...results.map((r) => r.requested));
  const at = (target: string) => results.find((r) => r.requested === largest && r.target === target);
  const gateway = at('gateway');
  const raw = at('raw proxy');
  if (gateway) {
    const kib = kibPerStream(gateway);
    const rawKib = raw ? ` (raw proxy with Node's default buffers ${fixed(kibPerStream(raw), 1)} KiB at ${int(raw.streams)})` : '';
    const short = gateway.streams < largest ? ` (**${int(largest)} not reached**: the open-file limit held ${int(gateway.streams)})` : '';
    lines.push(
      '',
      `Budget (issue 40, line 5), gateway at ${int(largest)} streams:`,
      `- ${int(gateway.streams)} open streams ≤ ${KIB_PER_STREAM_BUDGET} KiB RSS each: ${fixed(kib, 1)} KiB — ${kib <= KIB_PER_STREAM_BUDGET ? 'met' : `**not met** (over by ${fixed(kib - KIB_PER_STREAM_BUDGET, 1)} KiB)`}${rawKib}${short}`,
    );
    const w = gateway.watch;
    if (w) {
      const healthMet = w.healthFailures === 0 && w.healthMaxMs < HEALTH_BUDGET_MS;
      const lagMet = w.lagSeconds > 0 && w.lagP99WorstMs <= LAG_P99_BUDGET_MS;
      lines.push(
        `- /health under ${HEALTH_BUDGET_MS} ms throughout (a probe every 250 ms on a fresh connection, from the first stream opened to the window's end): max ${fixed(w.healthMaxMs, 1)} ms (p50 ${fixed(w.healthP50Ms, 1)}, p99 ${fixed(w.healthP99Ms, 1)}; ${int(w.healthProbes)} probes, ${int(w.healthFailures)} failed) — ${healthMet ? 'met' : '**not met**'}${Number.isFinite(w.slowestProbeOwnLagMs) ? `. During the slowest probe the probing process's own event loop ran up to ${fixed(w.slowestProbeOwnLagMs, 1)} ms late (the bench's side: it shares a core with the provider and the load processes)` : ''}`,
        `- event-loop lag p99 ≤ ${LAG_P99_BUDGET_MS} ms throughout (the worker's nodejs_eventloop_lag_p99_seconds, scraped from /metrics each second): worst second ${fixed(w.lagP99WorstMs, 1)} ms (median second ${fixed(w.lagP99MedianMs, 1)} ms, ${int(w.lagSeconds)} s) — ${lagMet ? 'met' : '**not met**'}${threadsText(w.worstSecondThreads)}`,
      );
    }
    if (raw) {
      const gap = gateway.addedGapP99 - raw.addedGapP99;
      lines.push(`- p99 added gap within ${GAP_MARGIN_MS} ms of the raw proxy's: ${fixed(gateway.addedGapP99, 2)} vs ${fixed(raw.addedGapP99, 2)} ms (${gap >= 0 ? '+' : ''}${fixed(gap, 2)}) — ${gap <= GAP_MARGIN_MS ? 'met' : '**not met**'}`);
    }
    lines.push(
      `- none dropped: every stream opened and whole, no errors (a 503 \`overloaded\` from the body budget included): ${gateway.errors.length === 0 && gateway.completed === gateway.streams && gateway.openDuringWindow === gateway.streams ? 'met' : `**not met** (${errorText(gateway)})`}`,
      `- Under the shipped 512 MiB container limit, one gateway process holds about **${int(Math.floor(streamsUnderLimit(gateway) / 100) * 100)} open streams** at this cost per stream (idle RSS included; before any other load).`,
    );
  }
  for (const r of results.filter((x) => x.heap)) {
    lines.push('', `Gateway heap per open stream at ${int(r.streams)} streams (snapshot with every stream open minus one idle, by class; --heap; that run's RSS includes what the snapshots left): ${fixed(r.heap!.total / 1024, 1)} KiB of JavaScript heap per stream of ${fixed(kibPerStream(r), 1)} KiB RSS.`, '', '| Class | bytes per stream |', '|---|---:|');
    for (const [name, bytes] of r.heap!.rows) lines.push(`| \`${name.replace(/[|`]/g, ' ').slice(0, 60)}\` | ${int(bytes)} |`);
  }
  const text = lines.join('\n');
  process.stdout.write(`\n${text}\n`);
  if (settings.write) writeBlock('STREAMS', text, TEMPLATE);
}

/** What the worker's threads did in the worst second: the loop busy, or ready and waiting while other threads held its core. */
function threadsText(threads: ThreadTimes | null): string {
  if (!threads) return '';
  const ms = (value: number) => `${int(Math.round(value))} ms`;
  return `. In that second the worker's main thread ran ${ms(threads.mainRunMs)} and waited ${ms(threads.mainWaitMs)} for a CPU while V8's worker threads (its GC and optimizing compilers) ran ${ms(threads.v8RunMs)} and its other threads ${ms(threads.otherRunMs)}`;
}
