import type { GoogleAuth } from 'google-auth-library';
import { CLOUD_PLATFORM_SCOPE, readServiceAccount, serviceAccountToken, type AccessToken } from './service-account.js';
import { refreshingSource, type AuthStateLog } from './refreshing-source.js';

export { refreshDelayMs, type AuthStateLog } from './refreshing-source.js';

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
 * login) goes through google-auth-library. The token is fetched at start-up and refreshed before it expires
 * (refreshing-source.ts); a failed fetch is retried with backoff while the old token, if still valid, keeps
 * serving. The log hears once per change of state, never the token.
 */
export function googleTokenSource(env: Readonly<Record<string, string | undefined>>, log: AuthStateLog, now: () => number = Date.now): GoogleTokenSource {
  const fetchToken = tokenFetcher(env['GOOGLE_APPLICATION_CREDENTIALS']);
  return refreshingSource(
    async () => {
      const token = await fetchToken(now());
      return { value: token.token, expiresAt: token.expiresAt };
    },
    log,
    { now, tooShort: (ms) => `the token endpoint gave a token that expires in ${ms} ms` },
  );
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
