import type { AwsSigning } from '../../generated/types/route-tables.js';
import { secretRedactor, type Redact } from '../../observe/redact-secrets.js';
import type { AwsCredentials } from './aws-sigv4.js';
import { refreshingSource, type AuthStateLog } from './refreshing-source.js';

/**
 * One fetch of the default chain may take this long (an unreachable instance metadata service, a slow STS) before it
 * counts as failed and is retried on the back-off. Requests never wait for a fetch: they read what is held.
 */
export const CHAIN_FETCH_BOUND_MS = 10_000;

/** The message the AWS SDK's default chain ends with when no source of credentials exists at all. */
const NO_SOURCE = 'Could not load credentials from any providers';

/** The default chain found no source of credentials at all (rather than a source that failed). */
export function isNoSourceError(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith(NO_SOURCE);
}

/** Where an `auth: aws` provider's credentials come from, decided at start-up. */
export type AwsKeys =
  | { readonly kind: 'static'; readonly credentials: AwsCredentials }
  /** Neither of the default variables is set: the AWS SDK's default credential chain (one per process). */
  | { readonly kind: 'chain' }
  /** Named variables unset (or a default pair half set): the provider is not configured. */
  | { readonly kind: 'missing'; readonly names: readonly string[] };

/** The variables the AWS SDKs read: an `auth: aws` provider's keys unless its aws_credentials_env names others. */
export const DEFAULT_AWS_KEY_NAMES = 'AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY';

/**
 * The provider's keys from the environment at start-up: the access key id and secret (and the session token, when
 * set) of its variables (aws_credentials_env, else AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN).
 * With the default variables both unset, the default chain; a pair half set, or named variables unset, is missing
 * (a half-set pair is a mistake, and signing as another identity found elsewhere would hide it).
 */
export function awsKeysFromEnv(signing: AwsSigning, env: Readonly<Record<string, string | undefined>>): AwsKeys {
  const named = signing.credentialsEnv;
  const keys = named
    ? { accessKeyId: env[named.accessKeyId], secretAccessKey: env[named.secretAccessKey], sessionToken: named.sessionToken ? env[named.sessionToken] : undefined }
    : { accessKeyId: env['AWS_ACCESS_KEY_ID'], secretAccessKey: env['AWS_SECRET_ACCESS_KEY'], sessionToken: env['AWS_SESSION_TOKEN'] };
  const { accessKeyId, secretAccessKey, sessionToken } = keys;
  if (accessKeyId && secretAccessKey) return { kind: 'static', credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } };
  if (!named && !accessKeyId && !secretAccessKey) return { kind: 'chain' };
  const [idName, secretName] = named ? [named.accessKeyId, named.secretAccessKey] : DEFAULT_AWS_KEY_NAMES.split(', ');
  const unset = [accessKeyId ? undefined : idName, secretAccessKey ? undefined : secretName];
  return { kind: 'missing', names: unset.filter((name) => name !== undefined) };
}

/** Credentials from the AWS SDK's default Node chain, held and refreshed ahead of expiry. */
export interface AwsChainSource {
  /** The credentials to sign with now; undefined while none are held (not fetched yet, or failing). */
  current(): AwsCredentials | undefined;
  /** The chain found no source at all (no profile, web identity, container or instance credentials): not configured. */
  readonly unconfigured: boolean;
  /** Takes the secret key and session token held now (and the ones before) out of text. */
  readonly redact: Redact;
  /** Settles once the first fetch did (succeeded or failed). */
  readonly ready: Promise<void>;
  close(): void;
}

/** How the chain is asked; a test may give another. `forceRefresh` skips the SDK's own cache, which hands back credentials it is about to replace. */
export type AwsCredentialProvider = (options: { forceRefresh: boolean }) => Promise<AwsCredentials>;

/**
 * `@aws-sdk/credential-providers`' fromNodeProviderChain (shared config and SSO, web identity as on EKS IRSA, ECS
 * container credentials, EC2 instance metadata), fetched at start-up and refreshed before expiry like Google's tokens
 * (refreshing-source.ts), each fetch bounded by CHAIN_FETCH_BOUND_MS. Loaded only when a provider needs it.
 */
export function awsDefaultChain(log: AuthStateLog, options: { readonly provider?: AwsCredentialProvider; readonly boundMs?: number } = {}): AwsChainSource {
  let ask = options.provider;
  let unconfigured = false;
  let redact: Redact = (text) => text;
  let before: readonly string[] = [];
  const boundMs = options.boundMs ?? CHAIN_FETCH_BOUND_MS;
  const source = refreshingSource(
    async () => {
      try {
        ask ??= await nodeProviderChain();
        const credentials = await bounded(ask({ forceRefresh: true }), boundMs);
        unconfigured = false;
        return { value: credentials, expiresAt: credentials.expiration ? credentials.expiration.getTime() : Infinity };
      } catch (error) {
        unconfigured = isNoSourceError(error);
        throw error;
      }
    },
    log,
    {
      onValue(credentials) {
        const now = [credentials.secretAccessKey, credentials.sessionToken ?? ''];
        redact = secretRedactor([...now, ...before]);
        before = now;
      },
    },
  );
  return {
    current: source.current,
    get unconfigured() {
      return unconfigured;
    },
    redact: (text) => redact(text),
    ready: source.ready,
    close: source.close,
  };
}

async function nodeProviderChain(): Promise<AwsCredentialProvider> {
  const { fromNodeProviderChain } = await import('@aws-sdk/credential-providers');
  const chain = fromNodeProviderChain();
  return (options) => chain(options);
}

/** The promise, or a rejection after `ms` (the fetch itself goes on; its result is dropped). */
function bounded<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`the AWS default credential chain gave nothing within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
