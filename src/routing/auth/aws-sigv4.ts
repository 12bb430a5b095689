
/** One identity: permanent keys, or temporary ones with their session token. */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string | undefined;
  /** When temporary credentials stop working; absent for permanent keys. */
  readonly expiration?: Date | undefined;
}

/** What one signed call needs: where it goes exactly and the exact bytes it carries. */
export interface AwsSigningInput {
  /** The full URL the request goes to (base URL, its own path included, then the dialect's path). */
  readonly url: URL;
  readonly body: string;
  /** The provider's routes.yaml region: never AWS_REGION / AWS_DEFAULT_REGION. */
  readonly region: string;
  /** The signing name of the service (Bedrock Runtime's is `bedrock`, not `bedrock-runtime`). */
  readonly service: string;
  readonly credentials: AwsCredentials;
  /** The signing time; now unless a test fixes it (AWS refuses more than 5 minutes of skew). */
  readonly date?: Date;
}

interface LoadedSigner {
  readonly SignatureV4: typeof import('@smithy/signature-v4').SignatureV4;
  readonly sha256: ReturnType<typeof sha256Of>;
}
let signer: Promise<LoadedSigner> | undefined;

/**
 * Loads the signer (~150 ms of module loading): at start-up when a provider signs (so no request waits for it), never
 * for a gateway without one.
 */
export function loadAwsSigner(): Promise<LoadedSigner> {
  signer ??= Promise.all([import('@smithy/signature-v4'), import('@smithy/hash-node')]).then(([{ SignatureV4 }, { Hash }]) => ({ SignatureV4, sha256: sha256Of(Hash) }));
  return signer;
}

/** The node:crypto sha256 the AWS SDK itself plugs into the signer on Node. */
function sha256Of(Hash: typeof import('@smithy/hash-node').Hash) {
  return Hash.bind(null, 'sha256');
}

/**
 * The headers that sign one POST with AWS Signature Version 4, as the official SDK signs (its own signer,
 * @smithy/signature-v4): `authorization`, `x-amz-date`, `x-amz-content-sha256` (the sha256 of the exact body bytes)
 * and, with temporary credentials, `x-amz-security-token`. Signed: host, x-amz-date, x-amz-content-sha256 and the
 * session token; the other headers of the call (user agent, request id, trace context) are not, so a hop that adds
 * or changes one does not break the signature.
 *
 * The canonical URI is the path as sent: it carries the model id encoded once (`:` as `%3A`, an ARN's `/` as `%2F`)
 * and the signer's uriEscapePath encodes each segment once more (`%253A`, `%252F`), which is what AWS computes on
 * its side. No query string: the call has none.
 */
export async function awsSignatureHeaders(input: AwsSigningInput): Promise<Record<string, string>> {
  const { url } = input;
  if (url.search !== '') throw new Error('a signed Bedrock call has no query string');
  const { accessKeyId, secretAccessKey, sessionToken } = input.credentials;
  const credentials = sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
  const { SignatureV4, sha256 } = await loadAwsSigner();
  const signed = await new SignatureV4({ service: input.service, region: input.region, credentials, sha256, uriEscapePath: true, applyChecksum: true }).sign(
    {
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query: {},
      // url.host is what node:http sends as Host: the port only when it is not the scheme's default.
      headers: { host: url.host },
      body: input.body,
    },
    { signingDate: input.date ?? new Date() },
  );
  const { host: _host, ...added } = signed.headers;
  return added;
}
