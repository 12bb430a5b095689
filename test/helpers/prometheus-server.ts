import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onFreePort } from './free-port.js';

/**
 * A real `prometheus` (the Debian package; .ci/run installs it) on a free loopback port, with a temporary config and
 * storage directory, scraping the given targets every `scrapeIntervalS` seconds (1 by default, so tests stay fast)
 * and evaluating `ruleFiles` as often. Killed on stop(), and on this process's exit should a test crash first.
 */
export interface PrometheusServer {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** An instant query (`/api/v1/query`); rejects with Prometheus' own error (a parse error, say). */
  query(promql: string): Promise<PromSample[]>;
  /** Any GET of the HTTP API (`/api/v1/series`, `/api/v1/rules`, …): its `data`; rejects on an error answer. */
  api<T = unknown>(path: string, params?: Record<string, string | readonly string[]>): Promise<T>;
  /** Resolves with the query's result once `predicate` accepts it; rejects after `timeoutMs` with the last result. */
  waitFor(promql: string, predicate: (result: PromSample[]) => boolean, timeoutMs?: number): Promise<PromSample[]>;
  /** Everything prometheus wrote so far (it logs to stderr). */
  output(): string;
  stop(): Promise<void>;
}

/** One series of an instant vector (or the one value of a scalar, with no labels). */
export interface PromSample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface PrometheusOptions {
  /** host:port of each /metrics to scrape. */
  readonly targets: readonly string[];
  readonly scrapeIntervalS?: number;
  /** Rule files (absolute paths) evaluated every scrape interval. */
  readonly ruleFiles?: readonly string[];
}

const READY_TIMEOUT_MS = 30_000;
const POLL_MS = 200;
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startPrometheus(options: PrometheusOptions): Promise<PrometheusServer> {
  const interval = `${options.scrapeIntervalS ?? 1}s`;
  const config = {
    global: { scrape_interval: interval, evaluation_interval: interval, scrape_timeout: interval },
    rule_files: options.ruleFiles ?? [],
    scrape_configs: [{ job_name: 'gateway', metrics_path: '/metrics', static_configs: [{ targets: options.targets }] }],
  };
  const { url, output, stop } = await onFreePort((port) => launch(config, port));

  const api = async <T>(path: string, params: Record<string, string | readonly string[]> = {}): Promise<T> => {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) for (const each of typeof value === 'string' ? [value] : value) search.append(key, each);
    const response = await fetch(`${url}${path}?${search}`);
    const body = (await response.json()) as { status: string; data?: T; errorType?: string; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path} ${JSON.stringify(params)}: ${body.errorType}: ${body.error}`);
    return body.data as T;
  };
  const query = async (promql: string): Promise<PromSample[]> => {
    const data = await api<{ resultType: string; result: unknown }>('/api/v1/query', { query: promql });
    if (data.resultType === 'scalar') return [{ metric: {}, value: Number((data.result as [number, string])[1]) }];
    if (data.resultType !== 'vector') throw new Error(`${promql}: a ${data.resultType}, not an instant vector`);
    return (data.result as { metric: Record<string, string>; value: [number, string] }[]).map((each) => ({ metric: each.metric, value: Number(each.value[1]) }));
  };
  const waitFor = async (promql: string, predicate: (result: PromSample[]) => boolean, timeoutMs = 30_000): Promise<PromSample[]> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const result = await query(promql);
      if (predicate(result)) return result;
      if (Date.now() > deadline) throw new Error(`${promql}: not as wanted within ${timeoutMs} ms; last: ${JSON.stringify(result)}`);
      // Prometheus has no push of query results: look again after about one evaluation.
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  };
  return { url, api, query, waitFor, output, stop };
}

/** Runs prometheus with `config` on `port` until it is ready, in a directory of its own; killed and removed on a failure. */
async function launch(config: object, port: number): Promise<{ url: string; output: () => string; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-prometheus-'));
  // JSON is YAML: no YAML writer needed.
  writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config));
  const url = `http://127.0.0.1:${port}`;
  const args = [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'];
  const child = spawn('prometheus', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  running.add(child);
  let output = '';
  child.stderr!.on('data', (piece: Buffer) => (output += piece.toString()));
  const exited = once(child, 'exit');
  const spawnFailed = once(child, 'error').then(([error]) => {
    throw new Error(`cannot run prometheus (apt-get install -y prometheus): ${(error as Error).message}`);
  });
  const stop = async () => {
    if (running.delete(child) && child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.race([waitReady(url, () => child.exitCode !== null, () => output), spawnFailed]);
  } catch (error) {
    await stop();
    throw error;
  }

  return { url, output: () => output, stop };
}

/** Polls /-/ready (503 while the TSDB opens; 200 once it serves queries). */
async function waitReady(url: string, hasExited: () => boolean, output: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (hasExited()) throw new Error(`prometheus exited before it was ready:\n${output()}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) return;
    if (Date.now() > deadline) throw new Error(`prometheus not ready within ${READY_TIMEOUT_MS} ms:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
