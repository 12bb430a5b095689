import cluster, { type Address, type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { isClusterMessage, LISTENER_CLOSED, RETIRE, WORKER_FAILED, WORKER_READY, type ListenerClosed, type Retire, type WorkerFailed, type WorkerReady } from './cluster-messages.js';
import { serveClusterMetrics } from './observe/metrics.js';
import { serveClusterLimits } from './policy/cluster/primary-store.js';

export interface ClusterPrimaryOptions {
  readonly workers: number;
  /** Each worker drains for up to this long on SIGTERM, or after a reload (it reads SHUTDOWN_GRACE_MS itself). */
  readonly shutdownGraceMs: number;
  /** A reload gives up on new workers not ready within this (RELOAD_TIMEOUT_MS); default 30 s. */
  readonly reloadTimeoutMs?: number;
  /** The build the primary itself was started from: a reload to another version is logged as such. */
  readonly version?: string;
  readonly logger: Logger;
  /** Called once, when the first worker listens: the service is ready. */
  readonly onListening: (address: Address) => void;
  /** The first workers cannot start, with the reason a worker gave: the primary prints it and exits 1. Default: a log line. */
  readonly onStartFailed?: (reason: string) => void;
}

/** A worker that dies is replaced after this, doubled for each death in a row, up to the maximum. */
const FIRST_RESTART_DELAY_MS = 100;
const MAX_RESTART_DELAY_MS = 10_000;
/** A worker that lived this long resets the delay: its death was not part of a crash loop. */
const STABLE_AFTER_MS = 30_000;
/** Past the grace period, workers get this long for their final words (the drain allows 2 s) before SIGKILL. */
const STOP_MARGIN_MS = 5000;
const DEFAULT_RELOAD_TIMEOUT_MS = 30_000;

/** serving: takes connections; incoming: started by a reload, not yet ready; retiring: finishing what it serves. */
type Role = 'serving' | 'incoming' | 'retiring';

interface WorkerState {
  role: Role;
  readonly bornAt: number;
  listening: boolean;
  /** What the worker said when it could not start. */
  failure?: string;
  /** The build it serves, once ready. */
  build?: { version: string; routesSha256: string };
}

/**
 * The node:cluster primary, always running (also with one worker): forks `workers` gateways that share one
 * listening socket, replaces a worker that dies (with backoff), reloads on SIGHUP (docs/reloading.md: new workers
 * from the dist/ on disk, then the old ones retire), and on SIGTERM or SIGINT has every worker drain, then exits 0.
 * It serves no request itself; it holds the callers' counts and answers the workers' requests for aggregated metrics.
 */
export function runClusterPrimary(options: ClusterPrimaryOptions): void {
  const { logger } = options;
  const reloadTimeoutMs = options.reloadTimeoutMs ?? DEFAULT_RELOAD_TIMEOUT_MS;
  const workers = new Map<Worker, WorkerState>();
  const restarts = new Set<NodeJS.Timeout>();
  let restartDelay = FIRST_RESTART_DELAY_MS;
  let ready = false;
  let stopping = false;
  /** The reload under way, and whether another SIGHUP came meanwhile (it runs next, on the dist/ then on disk). */
  let reload: { startedAt: number; timer: NodeJS.Timeout } | null = null;
  let reloadQueued = false;
  let serving: { version: string; routesSha256: string } | null = null;

  serveClusterMetrics();
  // Callers' limits and budgets: the primary holds the counts of every worker (without REDIS_URL, or while Redis is
  // down), so they survive a reload. The only worker counts alone and reports (no round trip on a request's path).
  const limits = serveClusterLimits();

  const fork = (role: Role) => workers.set(cluster.fork(), { role, bornAt: Date.now(), listening: false });
  const pidsOf = (role: Role) => [...workers].filter(([, state]) => state.role === role).map(([worker]) => worker.process.pid);

  cluster.on('message', (worker: Worker, message: unknown) => {
    const state = workers.get(worker);
    if (!state) return;
    if (isClusterMessage<ListenerClosed>(message, LISTENER_CLOSED) && worker.isConnected()) worker.send(message, undefined, () => {});
    if (isClusterMessage<WorkerFailed>(message, WORKER_FAILED)) state.failure = String(message.reason);
    if (!isClusterMessage<WorkerReady>(message, WORKER_READY)) return;
    state.build = { version: String(message.version), routesSha256: String(message.routes_sha256) };
    if (state.role === 'serving') serving ??= state.build;
    if (state.role === 'incoming') completeReloadIfReady();
    offerSoloCounting();
  });
  cluster.on('listening', (worker, address) => {
    const state = workers.get(worker);
    if (state) state.listening = true;
    logger.info({ worker_pid: worker.process.pid }, 'worker listening');
    if (ready) return;
    ready = true;
    options.onListening(address);
    if (reloadQueued) startReload();
  });
  cluster.on('exit', (worker, code, signal) => {
    const state = workers.get(worker);
    workers.delete(worker);
    offerSoloCounting();
    const died = { worker_pid: worker.process.pid, code, signal, ...(state?.failure ? { reason: state.failure } : {}) };
    if (stopping) {
      logger.info(died, 'worker stopped');
      if (workers.size === 0) finish();
      return;
    }
    if (state?.role === 'retiring') return logger.info(died, 'worker retired');
    if (state?.role === 'incoming') {
      const how = signal ? `signal ${signal}` : `code ${code}`;
      return failReload(`worker ${worker.process.pid} exited (${how}) before it was ready: ${state.failure ?? 'it gave no reason (see its output above)'}`);
    }
    if (!ready) {
      // Not one worker came up: replacing it would fail the same way.
      for (const other of workers.keys()) other.process.kill('SIGKILL');
      if (state?.failure && options.onStartFailed) return options.onStartFailed(state.failure);
      logger.fatal(died, 'worker failed to start');
      logger.flush();
      process.exit(1);
    }
    if (Date.now() - (state?.bornAt ?? Date.now()) >= STABLE_AFTER_MS) restartDelay = FIRST_RESTART_DELAY_MS;
    const delay = restartDelay;
    restartDelay = Math.min(restartDelay * 2, MAX_RESTART_DELAY_MS);
    // The replacement loads the dist/ on disk now, as a reload would.
    logger.error({ ...died, restart_in_ms: delay }, 'worker died; replacing it');
    const timer = setTimeout(() => {
      restarts.delete(timer);
      fork('serving');
    }, delay);
    restarts.add(timer);
  });

  function requestReload(): void {
    if (stopping) return void logger.warn('SIGHUP ignored: the gateway is stopping');
    if (reload || !ready) {
      // One reload at a time; the one asked for meanwhile runs next (once), on whatever dist/ is on disk then.
      if (!reloadQueued) logger.info({ reload_in_progress: reload !== null }, 'SIGHUP: reload queued, it starts when the one under way ends');
      reloadQueued = true;
      return;
    }
    startReload();
  }

  /** WORKERS=1 and no other worker alive (none starting, none retiring): the one that serves may count alone. */
  function offerSoloCounting(): void {
    if (options.workers !== 1 || stopping || reload || workers.size !== 1) return;
    const [worker, state] = [...workers][0]!;
    if (state.role === 'serving' && state.build) limits.offerSolo(worker);
  }

  function startReload(): void {
    reloadQueued = false;
    // Before the new worker exists: from here to the end of the reload, the primary decides every admission.
    limits.endSolo();
    logger.info({ workers: options.workers, timeout_ms: reloadTimeoutMs }, 'reloading: starting new workers from dist/');
    const timer = setTimeout(() => failReload(`new workers ${pidsOf('incoming').join(', ')} not ready within ${reloadTimeoutMs} ms (RELOAD_TIMEOUT_MS)`), reloadTimeoutMs);
    reload = { startedAt: Date.now(), timer };
    for (let i = 0; i < options.workers; i++) fork('incoming');
  }

  function completeReloadIfReady(): void {
    if (!reload) return;
    const incoming = [...workers.values()].filter((state) => state.role === 'incoming');
    if (incoming.length < options.workers || incoming.some((state) => !state.build)) return;
    // Old workers pending a restart are not needed any more: the new set is whole.
    for (const timer of restarts) clearTimeout(timer);
    restarts.clear();
    const retiring = pidsOf('serving');
    for (const [worker, state] of workers) {
      if (state.role === 'serving') retire(worker, state);
      else if (state.role === 'incoming') state.role = 'serving';
    }
    const build = incoming[0]!.build!;
    const was = serving;
    serving = build;
    logger.info(
      { workers: pidsOf('serving'), retiring, routes_sha256: build.routesSha256, previous_routes_sha256: was?.routesSha256 ?? null, version: build.version, took_ms: Date.now() - reload.startedAt },
      'reloaded: new workers serve, the old ones finish what they serve',
    );
    if (options.version && build.version !== options.version) {
      logger.warn({ primary_version: options.version, version: build.version }, 'the workers run another version than the primary: restart to upgrade the primary itself');
    }
    endReload();
  }

  function failReload(reason: string): void {
    if (!reload) return;
    for (const [worker, state] of workers) {
      if (state.role !== 'incoming') continue;
      // One that listens may hold a connection already: it finishes it. The others have none.
      if (state.listening) retire(worker, state);
      else {
        state.role = 'retiring';
        worker.process.kill('SIGKILL');
      }
    }
    logger.error({ reason, routes_sha256: serving?.routesSha256 ?? null, workers: pidsOf('serving'), took_ms: Date.now() - reload.startedAt }, 'reload failed; the old workers keep serving');
    endReload();
  }

  function endReload(): void {
    clearTimeout(reload?.timer);
    reload = null;
    if (reloadQueued) startReload();
    else offerSoloCounting();
  }

  function retire(worker: Worker, state: WorkerState): void {
    state.role = 'retiring';
    const message: Retire = { type: RETIRE };
    if (worker.isConnected()) worker.send(message, undefined, () => {});
    setTimeout(() => worker.process.kill('SIGKILL'), options.shutdownGraceMs + STOP_MARGIN_MS).unref();
  }

  function stop(signal: string): void {
    if (stopping) return;
    stopping = true;
    for (const timer of restarts) clearTimeout(timer);
    restarts.clear();
    clearTimeout(reload?.timer);
    logger.info({ signal, workers: workers.size, grace_ms: options.shutdownGraceMs }, 'draining workers');
    if (workers.size === 0) return finish();
    for (const worker of workers.keys()) worker.process.kill('SIGTERM');
    setTimeout(() => {
      logger.error({ workers: workers.size }, 'workers still running after the grace period; killing them');
      for (const worker of workers.keys()) worker.process.kill('SIGKILL');
    }, options.shutdownGraceMs + STOP_MARGIN_MS).unref();
  }

  function finish(): void {
    logger.info('stopped');
    logger.flush();
    process.exit(0);
  }

  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', requestReload);

  for (let i = 0; i < options.workers; i++) fork('serving');
}
