import type { GoogleAuth } from 'google-auth-library';
import { CLOUD_PLATFORM_SCOPE, readServiceAccount, serviceAccountToken, type AccessToken } from './service-account.js';

/** Tell the log about a change of state: `ok` with no reason, or why no token can be had. */
export type AuthStateLog = (state: 'ok' | 'failing', reason: string | null) => void;

/** Refresh this long before a token expires, so no request ever waits for a refresh. */
const REFRESH_AHEAD_MS = 5 * 60_000;
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 60_000;

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
 * before it expires (at half its life when that is later); a failed fetch is retried with backoff while the
 * old token, if still valid, keeps serving. The log hears once per change of state, never the token.
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
  const refresh = async (): Promise<void> => {
    try {
      const fresh = await fetchToken(now());
      if (closed) return;
      token = fresh;
      retryMs = FIRST_RETRY_MS;
      if (state !== 'ok') log('ok', null);
      state = 'ok';
      const lifetime = fresh.expiresAt - now();
      // A short-lived token (under twice the lead) is refreshed at half its life, never in a loop.
      schedule(Math.max(lifetime - REFRESH_AHEAD_MS, lifetime / 2));
    } catch (error) {
      if (closed) return;
      const reason = error instanceof Error ? error.message.slice(0, 300) : 'unknown error';
      if (state !== 'failing') log('failing', reason);
      state = 'failing';
      schedule(retryMs);
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
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
