import type { GoogleAuth } from 'google-auth-library';
import { CLOUD_PLATFORM_SCOPE, readServiceAccount, serviceAccountToken, type AccessToken } from './service-account.js';

/** Tell the log about a change of state: `ok` with no reason, or why no token can be had. */
export type AuthStateLog = (state: 'ok' | 'failing', reason: string | null) => void;

/** Refresh this long before a token expires, so no request ever waits for a refresh. */
const REFRESH_AHEAD_MS = 5 * 60_000;
/** Refresh at least hourly, whatever life a token claims: setTimeout cannot wait past 2^31 − 1 ms (~24.8 days) and fires at once beyond. */
const MAX_REFRESH_MS = 60 * 60_000;
/** A token due for refresh sooner than this is refreshed on the back-off below instead: a tiny expires_in never loops. */
const MIN_REFRESH_MS = 1000;
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 60_000;

/**
 * When to refresh a token that lives `lifetimeMs` more: REFRESH_AHEAD_MS before it expires, or at half its life
 * when that is later (a short-lived token), never later than MAX_REFRESH_MS; undefined when that is sooner than
 * MIN_REFRESH_MS (the token lives too short to be refreshed in time: back off as after a failure).
 */
export function refreshDelayMs(lifetimeMs: number): number | undefined {
  const due = Math.min(Math.max(lifetimeMs - REFRESH_AHEAD_MS, lifetimeMs / 2), MAX_REFRESH_MS);
  return due >= MIN_REFRESH_MS ? due : undefined;
}

/** A source of Google access tokens, fetched ahead and refreshed before they expire. */
export interface GoogleTokenSource {
  /** The current token, or undefined when none is valid (the engine answers 503 without calling the provider). */
  current(): string | undefined;
  /** Settles once the first fetch did (succeeded or failed). */
  readonly ready: Promise<void>;
  close(): void;
}

/**
 * routes.yaml `auth: google`: an OAuth2 token (scope cloud-platform) from Application Default Credentials.
 * A service-account key file (GOOGLE_APPLICATION_CREDENTIALS) is exchanged by our own JWT grant at its
 * token_uri; anything else (the metadata server on GCE, GKE workload identity, Cloud Run, a user's gcloud
 * login) goes through google-auth-library. The token is fetched at start-up and refreshed REFRESH_AHEAD_MS
 * before it expires (at half its life when that is later), at least hourly (refreshDelayMs); a failed fetch, or
 * a token that expires within about two seconds, is retried with backoff while the old token, if still valid,
 * keeps serving. The log hears once per change of state, never the token.
 */
export function googleTokenSource(env: Readonly<Record<string, string | undefined>>, log: AuthStateLog, now: () => number = Date.now): GoogleTokenSource {
  const fetchToken = tokenFetcher(env['GOOGLE_APPLICATION_CREDENTIALS']);
  let token: AccessToken | undefined;
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
  const failed = (reason: string) => {
    if (state !== 'failing') log('failing', reason);
    state = 'failing';
    schedule(retryMs);
    retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
  };
  const refresh = async (): Promise<void> => {
    try {
      const fresh = await fetchToken(now());
      if (closed) return;
      token = fresh;
      const lifetime = fresh.expiresAt - now();
      const due = refreshDelayMs(lifetime);
      if (due === undefined) {
        // Kept while it lasts, but a token that expires before it can be refreshed is as good as none.
        failed(`the token endpoint gave a token that expires in ${Math.max(0, Math.round(lifetime))} ms`);
        return;
      }
      retryMs = FIRST_RETRY_MS;
      if (state !== 'ok') log('ok', null);
      state = 'ok';
      schedule(due);
    } catch (error) {
      if (closed) return;
      failed(error instanceof Error ? error.message.slice(0, 300) : 'unknown error');
    }
  };
  const ready = refresh();
  return {
    current: () => (token !== undefined && token.expiresAt > now() ? token.token : undefined),
    ready,
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}

/** How a token is fetched: the key file's own grant, or google-auth-library's ADC. */
function tokenFetcher(keyFile: string | undefined): (now: number) => Promise<AccessToken> {
  let auth: GoogleAuth | undefined;
  return async (now) => {
    const key = keyFile ? await readServiceAccount(keyFile) : undefined;
    if (key) return serviceAccountToken(key, now);
    // Loaded only here: a gateway without such credentials (or with a key file) never pays for the library.
    auth ??= new (await import('google-auth-library')).GoogleAuth({ scopes: CLOUD_PLATFORM_SCOPE });
    const client = await auth.getClient();
    const { token } = await client.getAccessToken();
    if (!token) throw new Error('Application Default Credentials gave no access token');
    const expiry = client.credentials.expiry_date;
    return { token, expiresAt: typeof expiry === 'number' && expiry > now ? expiry : now + 3600_000 };
  };
}
