import cluster, { type Address, type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { serveClusterMetrics } from './observe/metrics.js';
import { serveClusterLimits } from './policy/cluster-store.js';

export interface ClusterPrimaryOptions {
  readonly workers: number;
  /** Each worker drains for up to this long on SIGTERM (it reads SHUTDOWN_GRACE_MS itself). */
  readonly shutdownGraceMs: number;
  readonly logger: Logger;
  /** Called once, when the first worker listens: the service is ready. */
  readonly onListening: (address: Address) => void;
}

/** A worker that dies is replaced after this, doubled for each death in a row, up to the maximum. */
const FIRST_RESTART_DELAY_MS = 100;
const MAX_RESTART_DELAY_MS = 10_000;
/** A worker that lived this long resets the delay: its death was not part of a crash loop. */
const STABLE_AFTER_MS = 30_000;
/** Past the grace period, workers get this long for their final words (the drain allows 2 s) before SIGKILL. */
const STOP_MARGIN_MS = 5000;

/**
 * The node:cluster primary: forks `workers` gateways that share one listening socket, replaces a
 * worker that dies (with backoff), and on SIGTERM, SIGINT or SIGHUP has every worker drain, then exits 0.
 * It serves no request itself; it answers the workers' requests for aggregated metrics.
 */
export function runClusterPrimary(options: ClusterPrimaryOptions): void {
  const { logger } = options;
  const bornAt = new Map<Worker, number>();
  const restarts = new Set<NodeJS.Timeout>();
  let restartDelay = FIRST_RESTART_DELAY_MS;
  let ready = false;
  let stopping = false;

  serveClusterMetrics();
  // Callers' limits and budgets: the primary holds the counts of every worker (without REDIS_URL, or while Redis is down).
  serveClusterLimits();

  const fork = () => {
    const worker = cluster.fork();
    bornAt.set(worker, Date.now());
  };

  cluster.on('online', (worker) => logger.info({ worker_pid: worker.process.pid }, 'worker started'));
  cluster.on('listening', (worker, address) => {
    logger.info({ worker_pid: worker.process.pid }, 'worker listening');
    if (ready) return;
    ready = true;
    options.onListening(address);
  });
  cluster.on('exit', (worker, code, signal) => {
    const born = bornAt.get(worker) ?? Date.now();
    bornAt.delete(worker);
    const died = { worker_pid: worker.process.pid, code, signal };
    if (stopping) {
      logger.info(died, 'worker stopped');
      if (bornAt.size === 0) finish();
      return;
    }
    if (!ready) {
      // Not one worker came up (it said why on stderr): replacing it would fail the same way.
      logger.fatal(died, 'worker failed to start');
      for (const other of bornAt.keys()) other.process.kill('SIGKILL');
      logger.flush();
      process.exit(1);
    }
    if (Date.now() - born >= STABLE_AFTER_MS) restartDelay = FIRST_RESTART_DELAY_MS;
    const delay = restartDelay;
    restartDelay = Math.min(restartDelay * 2, MAX_RESTART_DELAY_MS);
    logger.error({ ...died, restart_in_ms: delay }, 'worker died; replacing it');
    const timer = setTimeout(() => {
      restarts.delete(timer);
      fork();
    }, delay);
    restarts.add(timer);
  });

  function stop(signal: string): void {
    if (stopping) return;
    stopping = true;
    for (const timer of restarts) clearTimeout(timer);
    restarts.clear();
    logger.info({ signal, workers: bornAt.size, grace_ms: options.shutdownGraceMs }, 'draining workers');
    if (bornAt.size === 0) return finish();
    for (const worker of bornAt.keys()) worker.process.kill('SIGTERM');
    setTimeout(() => {
      logger.error({ workers: bornAt.size }, 'workers still running after the grace period; killing them');
      for (const worker of bornAt.keys()) worker.process.kill('SIGKILL');
    }, options.shutdownGraceMs + STOP_MARGIN_MS).unref();
  }

  function finish(): void {
    logger.info('stopped');
    logger.flush();
    process.exit(0);
  }

  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => stop('SIGHUP'));

  for (let i = 0; i < options.workers; i++) fork();
}
