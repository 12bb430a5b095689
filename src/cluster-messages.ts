/**
 * What a worker and its primary tell each other besides node:cluster's own messages and the metrics and limits
 * protocols: a worker is ready (it answered its own /health and listens), or could not start (and why); the primary
 * tells an old worker to retire after a reload (docs/reloading.md).
 */
export const WORKER_READY = 'chat-routing-gateway:worker-ready';
export const WORKER_FAILED = 'chat-routing-gateway:worker-failed';
export const RETIRE = 'chat-routing-gateway:retire';
/**
 * A retiring worker has closed its share of the listening socket; the primary echoes it. Under round-robin the
 * primary may have handed the worker a connection before it saw the close: the worker hands such a connection back,
 * but only while it lives, so it exits only after the echo, which comes after any such connection.
 */
export const LISTENER_CLOSED = 'chat-routing-gateway:listener-closed';

export interface WorkerReady {
  readonly type: typeof WORKER_READY;
  readonly version: string;
  readonly routes_sha256: string;
}

export interface WorkerFailed {
  readonly type: typeof WORKER_FAILED;
  /** One line, as the start-up refusals on stderr read. */
  readonly reason: string;
}

export interface Retire {
  readonly type: typeof RETIRE;
}

export interface ListenerClosed {
  readonly type: typeof LISTENER_CLOSED;
}

export function isClusterMessage<T extends { type: string }>(message: unknown, type: T['type']): message is T {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;
}
