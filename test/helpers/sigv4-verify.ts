import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

// An AWS Signature Version 4 check written from AWS's specification with node:crypto alone, on purpose not with
// @smithy/signature-v4 (what the gateway signs with): a verifier built on the signer would agree with any bug of
// it. test/clients/bedrock-sigv4-verifier.test.ts proves it against the official AWS SDK and AWS's own test vector.

export interface SigV4Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** Temporary credentials: the request must carry (and sign) this x-amz-security-token. */
  readonly sessionToken?: string;
}

export interface SigV4Expectation {
  readonly region: string;
  /** `bedrock` for Bedrock Runtime. */
  readonly service: string;
  /** Every identity the server knows (several: credentials refreshed while requests run). */
  readonly credentials: readonly SigV4Credentials[] | (() => readonly SigV4Credentials[]);
  /** The server's clock; AWS refuses more than 5 minutes of skew. */
  readonly now?: () => number;
}

/** What the server saw: the request line's target as sent, raw header pairs, and the body's exact bytes. */
export interface SignedRequestSeen {
  readonly method: string;
  /** Path and query as on the request line, not decoded. */
  readonly target: string;
  /** Node's rawHeaders: name, value, name, value … */
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
}

export interface SigV4Verdict {
  /** Why AWS would refuse the request; undefined when the signature holds. */
  readonly refused?: string;
  /** The canonical request the verifier computed (present once the Authorization header parsed). */
  readonly canonicalRequest?: string;
  readonly accessKeyId?: string;
}

const MAX_SKEW_MS = 5 * 60_000;
const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request, ?SignedHeaders=([a-z0-9;._-]+), ?Signature=([0-9a-f]{64})$/;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/** The `verify` hook of the Bedrock mock: undefined when the request is signed as AWS requires, else why not. */
export function sigV4Verifier(expect: SigV4Expectation): (req: IncomingMessage, body: Buffer) => string | undefined {
  return (req, body) => checkSigV4({ method: req.method ?? '', target: req.url ?? '', rawHeaders: req.rawHeaders, body }, expect).refused;
}

export function checkSigV4(seen: SignedRequestSeen, expect: SigV4Expectation): SigV4Verdict {
  const headers = headerValues(seen.rawHeaders);
  const authorization = headers.get('authorization');
  if (authorization === undefined) return { refused: 'no Authorization header' };
  const parsed = AUTHORIZATION.exec(authorization.trim());
  if (!parsed) return { refused: 'Authorization is not AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…' };
  const [, accessKeyId, scopeDate, region, service, signedList, signature] = parsed as unknown as string[];
  const known = (typeof expect.credentials === 'function' ? expect.credentials() : expect.credentials).find((each) => each.accessKeyId === accessKeyId);
  if (!known) return { refused: `unknown access key id ${accessKeyId}` };
  if (region !== expect.region) return { refused: `signed for region ${region}, expected ${expect.region}` };
  if (service !== expect.service) return { refused: `signed for service ${service}, expected ${expect.service}` };

  const amzDate = headers.get('x-amz-date');
  const date = amzDate === undefined ? undefined : AMZ_DATE.exec(amzDate);
  if (!amzDate || !date) return { refused: 'no valid x-amz-date' };
  if (amzDate.slice(0, 8) !== scopeDate) return { refused: 'the credential scope date is not the x-amz-date day' };
  const at = Date.UTC(+date[1]!, +date[2]! - 1, +date[3]!, +date[4]!, +date[5]!, +date[6]!);
  const now = expect.now ? expect.now() : Date.now();
  if (Math.abs(now - at) > MAX_SKEW_MS) return { refused: `x-amz-date is ${Math.round((at - now) / 1000)} s from the server's clock (more than 5 minutes)` };

  const signed = signedList!.split(';');
  if ([...signed].sort().join(';') !== signedList || new Set(signed).size !== signed.length) return { refused: 'SignedHeaders is not sorted and unique' };
  for (const needed of ['host', 'x-amz-date']) if (!signed.includes(needed)) return { refused: `${needed} is not signed` };
  for (const name of signed) if (!headers.has(name)) return { refused: `signed header ${name} is not in the request` };
  const token = headers.get('x-amz-security-token');
  if (known.sessionToken !== undefined) {
    if (token !== known.sessionToken) return { refused: 'the session token is missing or not this identity\'s' };
    if (!signed.includes('x-amz-security-token')) return { refused: 'x-amz-security-token is not signed' };
  } else if (token !== undefined) {
    return { refused: 'a session token with permanent credentials' };
  }

  const bodyHash = sha256Hex(seen.body);
  const declared = headers.get('x-amz-content-sha256');
  if (declared !== undefined && declared !== bodyHash) return { refused: 'x-amz-content-sha256 is not the sha256 of the body' };

  const question = seen.target.indexOf('?');
  const path = question < 0 ? seen.target : seen.target.slice(0, question);
  const query = question < 0 ? '' : seen.target.slice(question + 1);
  const canonicalRequest = [
    seen.method,
    canonicalUri(path),
    canonicalQuery(query),
    ...signed.map((name) => `${name}:${headers.get(name)}`),
    '',
    signedList,
    bodyHash,
  ].join('\n');
  const scope = `${scopeDate}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(Buffer.from(canonicalRequest))].join('\n');
  const expected = signatureOf(known.secretAccessKey, scopeDate!, region!, service!, stringToSign);
  const verdict = { canonicalRequest, accessKeyId: accessKeyId! };
  if (!timingSafeEqual(Buffer.from(expected), Buffer.from(signature!))) return { ...verdict, refused: 'The request signature we calculated does not match the signature you provided.' };
  return verdict;
}

/** The hex signature of a string to sign: HMAC chain AWS4<secret> → date → region → service → aws4_request. */
export function signatureOf(secret: string, shortDate: string, region: string, service: string, stringToSign: string): string {
  let key: Buffer = Buffer.from(`AWS4${secret}`);
  for (const part of [shortDate, region, service, 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
  return createHmac('sha256', key).update(stringToSign).digest('hex');
}

/**
 * Every segment of the path as received (already percent-encoded once) URI-encoded once more, as AWS does for every
 * service but S3: `%3A` → `%253A`. Only RFC 3986's unreserved characters stay as they are.
 */
export function canonicalUri(path: string): string {
  if (path === '') return '/';
  return path.split('/').map(uriEncode).join('/');
}

function canonicalQuery(query: string): string {
  if (query === '') return '';
  const pairs = query.split('&').map((pair) => {
    const equals = pair.indexOf('=');
    const name = decodeURIComponent(equals < 0 ? pair : pair.slice(0, equals));
    const value = equals < 0 ? '' : decodeURIComponent(pair.slice(equals + 1));
    return [uriEncode(name), uriEncode(value)] as const;
  });
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([name, value]) => `${name}=${value}`).join('&');
}

function uriEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Lower-case names to canonical values: each value trimmed, inner runs of white space one space, repeats joined by commas. */
function headerValues(raw: readonly string[]): Map<string, string> {
  const values = new Map<string, string[]>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!.trim().replace(/\s+/g, ' ');
    const list = values.get(name);
    if (list) list.push(value);
    else values.set(name, [value]);
  }
  return new Map([...values].map(([name, list]) => [name, list.join(',')]));
}

function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
