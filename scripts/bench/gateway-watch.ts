// What bench:streams watches in the gateway while its streams open and run: /health answered within 50 ms every
// time (a probe on a fresh connection every 250 ms, as a load balancer's would come), and the event loop's lag
// p99 inside the serving worker, read from what the gateway already exports on /metrics
// (nodejs_eventloop_lag_p99_seconds, prom-client's monitorEventLoopDelay, reset at each scrape): a scrape each
// second gives the p99 of each second, and with each scrape the worker's threads' times (thread-times.ts), so the
// worst second says where its time went. The probes run in the orchestrator; its own delays count against the gateway,
// and the report says how late its own event loop ran during the slowest probe.
import { request } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { percentile } from './proc-stats.js';
import { threadTimes, threadTimesBetween, type ThreadTimes } from './thread-times.js';

export interface GatewayWatch {
  readonly healthP50Ms: number;
  readonly healthP99Ms: number;
  readonly healthMaxMs: number;
  readonly healthProbes: number;
  /** Probes that failed or took 5 s. */
  readonly healthFailures: number;
  /**
   * How late the probing process's own event loop ran during the slowest probe, ms: the part of healthMaxMs that may
   * be the bench's (it shares a core with the provider and the load processes), not the gateway's.
   */
  readonly slowestProbeOwnLagMs: number;
  /** The p99 of each second's lag, ms: their median and their worst. */
  readonly lagP99MedianMs: number;
  readonly lagP99WorstMs: number;
  readonly lagSeconds: number;
  /** The worker's threads in the second of the worst lag (thread-times.ts): why the loop was late; null without schedstat. */
  readonly worstSecondThreads: ThreadTimes | null;
  /** The worker's memory at the last scrape (prom-client's process metrics), bytes: what its RSS is made of. */
  readonly memory: WorkerMemory | null;
}

export interface WorkerMemory {
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly newSpace: number;
  readonly oldSpace: number;
  readonly external: number;
}

const gauge = (body: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(body)?.[1]);

/** The worker's heap and external memory, from one /metrics answer (null when a figure is missing). */
export function workerMemory(body: string): WorkerMemory | null {
  const memory = {
    heapTotal: gauge(body, 'nodejs_heap_size_total_bytes'),
    heapUsed: gauge(body, 'nodejs_heap_size_used_bytes'),
    newSpace: gauge(body, 'nodejs_heap_space_size_total_bytes\\{space="new"\\}'),
    oldSpace: gauge(body, 'nodejs_heap_space_size_total_bytes\\{space="old"\\}'),
    external: gauge(body, 'nodejs_external_memory_bytes'),
  };
  return Object.values(memory).every(Number.isFinite) ? memory : null;
}

const HEALTH_EVERY_MS = 250;
const SCRAPE_EVERY_MS = 1000;
const PROBE_TIMEOUT_MS = 5000;
const LAG = /^nodejs_eventloop_lag_p99_seconds(?:\{[^}]*\})? (\S+)$/m;

/** One GET on a fresh connection: its body and the time to its last byte, or null when it failed. */
function get(url: string): Promise<{ ms: number; body: string } | null> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: PROBE_TIMEOUT_MS }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (piece: string) => (body += piece));
      res.on('end', () => resolve(res.statusCode === 200 ? { ms: performance.now() - started, body } : null));
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
    req.end();
  });
}

/** Starts watching the gateway at `origin`, whose serving worker is `workerPid`; `stop()` ends it and gives the figures. */
export function watchGateway(origin: string, workerPid: number): { stop(): Promise<GatewayWatch> } {
  let running = true;
  const health: number[] = [];
  const lags: number[] = [];
  let worstLagMs = -Infinity;
  let worstSecondThreads: ThreadTimes | null = null;
  let failures = 0;
  let memory: WorkerMemory | null = null;
  let slowestProbeMs = -Infinity;
  let slowestProbeOwnLagMs = Number.NaN;
  const ownLag = monitorEventLoopDelay({ resolution: 10 });
  ownLag.enable();
  const probing = (async () => {
    while (running) {
      ownLag.reset();
      const answer = await get(`${origin}/health`);
      if (answer && answer.ms > slowestProbeMs) [slowestProbeMs, slowestProbeOwnLagMs] = [answer.ms, ownLag.max / 1e6];
      if (answer) health.push(answer.ms);
      else failures++;
      await sleep(HEALTH_EVERY_MS);
    }
  })();
  const scraping = (async () => {
    await get(`${origin}/metrics`); // resets the histogram: what came before the watch is not counted
    let threadsBefore = threadTimes(workerPid);
    while (running) {
      await sleep(SCRAPE_EVERY_MS);
      const answer = await get(`${origin}/metrics`);
      const threadsNow = threadTimes(workerPid);
      const seconds = answer ? Number(LAG.exec(answer.body)?.[1]) : Number.NaN;
      if (Number.isFinite(seconds)) lags.push(seconds * 1000);
      if (seconds * 1000 > worstLagMs) {
        worstLagMs = seconds * 1000;
        worstSecondThreads = threadsBefore && threadsNow && threadTimesBetween(threadsBefore, threadsNow);
      }
      threadsBefore = threadsNow;
      if (answer) memory = workerMemory(answer.body) ?? memory;
    }
  })();
  return {
    async stop() {
      running = false;
      await Promise.all([probing, scraping]);
      ownLag.disable();
      const sortedHealth = [...health].sort((a, b) => a - b);
      const sortedLags = [...lags].sort((a, b) => a - b);
      return {
        healthP50Ms: percentile(sortedHealth, 50),
        healthP99Ms: percentile(sortedHealth, 99),
        healthMaxMs: sortedHealth.at(-1) ?? Number.NaN,
        healthProbes: health.length + failures,
        healthFailures: failures,
        slowestProbeOwnLagMs,
        lagP99MedianMs: percentile(sortedLags, 50),
        lagP99WorstMs: sortedLags.at(-1) ?? Number.NaN,
        lagSeconds: lags.length,
        worstSecondThreads,
        memory,
      };
    },
  };
}
