import { sign } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { readLimited } from '../read-limited.js';

/** The OAuth2 scope Vertex AI needs. */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** An access token and when it stops working (epoch ms). */
export interface AccessToken {
  readonly token: string;
  readonly expiresAt: number;
}

/** The fields of a service-account key file this grant reads. */
interface ServiceAccountKey {
  readonly client_email: string;
  readonly private_key: string;
  readonly private_key_id?: string;
  readonly token_uri: string;
}

const TOKEN_TIMEOUT_MS = 10_000;
/** A token response is a few hundred bytes: more than this is not one, and is not read further. */
const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

/** The key file's JSON when it is a service-account key; undefined for another kind (an authorized-user file, external account). */
export async function readServiceAccount(file: string): Promise<ServiceAccountKey | undefined> {
  const parsed = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  if (parsed['type'] !== 'service_account') return undefined;
  const { client_email: email, private_key: key, private_key_id: keyId, token_uri: tokenUri } = parsed;
  if (typeof email !== 'string' || typeof key !== 'string') throw new Error('the service-account file has no client_email or private_key');
  const uri = typeof tokenUri === 'string' ? tokenUri : 'https://oauth2.googleapis.com/token';
  if (!/^https:\/\//.test(uri) && !/^http:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(uri)) throw new Error('the service-account token_uri is not https');
  return { client_email: email, private_key: key, token_uri: uri, ...(typeof keyId === 'string' ? { private_key_id: keyId } : {}) };
}

/**
 * The JWT-bearer grant (RFC 7523) for a service account, posted to the key file's own token_uri (Google's
 * Python and Go libraries honour it; google-auth-library for Node does not). The assertion is signed
 * RS256 with the file's private key and lives one hour.
 */
export async function serviceAccountToken(key: ServiceAccountKey, now = Date.now()): Promise<AccessToken> {
  const iat = Math.floor(now / 1000);
  const header = { alg: 'RS256', typ: 'JWT', ...(key.private_key_id ? { kid: key.private_key_id } : {}) };
  const claims = { iss: key.client_email, sub: key.client_email, aud: key.token_uri, scope: CLOUD_PLATFORM_SCOPE, iat, exp: iat + 3600 };
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const assertion = `${input}.${sign('RSA-SHA256', Buffer.from(input), key.private_key).toString('base64url')}`;
  const response = await fetch(key.token_uri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
    redirect: 'error',
    signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
  });
  // The token endpoint's own words (error, error_description) are not logged: they could quote the assertion.
  if (!response.ok) {
    await response.body?.cancel().catch(() => {});
    throw new Error(`the token endpoint answered HTTP ${response.status}`);
  }
  const text = await boundedText(response);
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error('the token endpoint answered with a body that is not JSON');
  }
  const token = body['access_token'];
  const expiresIn = body['expires_in'];
  if (typeof token !== 'string' || token === '' || !/^[\x21-\x7e]+$/.test(token)) throw new Error('the token endpoint answered without an access_token');
  const lifetime = typeof expiresIn === 'number' && expiresIn > 0 ? expiresIn : 3600;
  return { token, expiresAt: now + lifetime * 1000 };
}

/** The body as text, read up to MAX_TOKEN_RESPONSE_BYTES: a longer one is cut off there (the connection is let go) and refused. */
async function boundedText(response: Response): Promise<string> {
  if (!response.body) return '';
  const body = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
  const { bytes, truncated } = await readLimited(body, MAX_TOKEN_RESPONSE_BYTES);
  if (truncated) {
    body.destroy();
    throw new Error(`the token endpoint answered with a body over ${MAX_TOKEN_RESPONSE_BYTES / 1024} KiB`);
  }
  return bytes.toString('utf8');
}

function base64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}
