/** Tell the log about a change of state: `ok` with no reason, or why no credential can be had (and the error, when one was thrown). */
export type AuthStateLog = (state: 'ok' | 'failing', reason: string | null, error?: unknown) => void;

/** Refresh this long before a credential expires, so no request ever waits for a refresh. */
const REFRESH_AHEAD_MS = 5 * 60_000;
/** Refresh at least hourly, whatever life a credential claims: setTimeout cannot wait past 2^31 − 1 ms (~24.8 days) and fires at once beyond. */
const MAX_REFRESH_MS = 60 * 60_000;
/** A credential due for refresh sooner than this is refreshed on the back-off below instead: a tiny lifetime never loops. */
const MIN_REFRESH_MS = 1000;
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 60_000;

/**
 * When to refresh a credential that lives `lifetimeMs` more: REFRESH_AHEAD_MS before it expires, or at half its life
 * when that is later (a short-lived one), never later than MAX_REFRESH_MS; undefined when that is sooner than
 * MIN_REFRESH_MS (it lives too short to be refreshed in time: back off as after a failure).
 */
export function refreshDelayMs(lifetimeMs: number): number | undefined {
  const due = Math.min(Math.max(lifetimeMs - REFRESH_AHEAD_MS, lifetimeMs / 2), MAX_REFRESH_MS);
  return due >= MIN_REFRESH_MS ? due : undefined;
}

/** A credential and when it stops working (ms since the epoch; Infinity when it does not expire). */
export interface Expiring<T> {
  readonly value: T;
  readonly expiresAt: number;
}

/** A credential fetched ahead and refreshed before it expires; a request only reads it, never waits for it. */
export interface RefreshingSource<T> {
  /** The current credential, or undefined when none is valid. */
  current(): T | undefined;
  /** Why the last fetch failed; undefined before the first fetch settles and while fetches succeed. */
  lastError(): unknown;
  /** Settles once the first fetch did (succeeded or failed). */
  readonly ready: Promise<void>;
  close(): void;
}

/**
 * Fetches at once, then REFRESH_AHEAD_MS before expiry (at half the life when that is later), at least hourly
 * (refreshDelayMs); a failed fetch, or a credential that expires within about two seconds, is retried with backoff
 * (1 s doubling to 60 s) while the old credential, if still valid, keeps serving. The log hears once per change of
 * state, never the credential; `onValue` hears each new one (to redact it).
 */
export function refreshingSource<T>(
  fetch: () => Promise<Expiring<T>>,
  log: AuthStateLog,
  options: { readonly now?: () => number; readonly onValue?: (value: T) => void; readonly tooShort?: (lifetimeMs: number) => string } = {},
): RefreshingSource<T> {
  const now = options.now ?? Date.now;
  let held: Expiring<T> | undefined;
  let failure: unknown;
  let state: 'ok' | 'failing' | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let retryMs = FIRST_RETRY_MS;

  const schedule = (ms: number) => {
    if (closed) return;
    timer = setTimeout(() => void refresh(), Math.max(0, ms));
    timer.unref();
  };
  /** Logged once per change of state; the next fetch after a back-off that doubles up to MAX_RETRY_MS. */
  const failed = (reason: string, error?: unknown) => {
    if (state !== 'failing') log('failing', reason, error);
    state = 'failing';
    schedule(retryMs);
    retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
  };
  const refresh = async (): Promise<void> => {
    try {
      const fresh = await fetch();
      if (closed) return;
      held = fresh;
      failure = undefined;
      options.onValue?.(fresh.value);
      const lifetime = fresh.expiresAt - now();
      const due = refreshDelayMs(lifetime);
      if (due === undefined) {
        // Kept while it lasts, but a credential that expires before it can be refreshed is as good as none.
        const ms = Math.max(0, Math.round(lifetime));
        failed(options.tooShort ? options.tooShort(ms) : `the credentials given expire in ${ms} ms`);
        return;
      }
      retryMs = FIRST_RETRY_MS;
      if (state !== 'ok') log('ok', null);
      state = 'ok';
      schedule(due);
    } catch (error) {
      if (closed) return;
      failure = error;
      failed(error instanceof Error ? error.message.slice(0, 300) : 'unknown error', error);
    }
  };
  const ready = refresh();
  return {
    current: () => (held !== undefined && held.expiresAt > now() ? held.value : undefined),
    lastError: () => failure,
    ready,
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}
