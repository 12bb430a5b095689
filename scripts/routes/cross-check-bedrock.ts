import { hasKey } from './cross-check-failover.js';

type Report = (path: (string | number)[], at: 'key' | 'value', message: string) => void;

/** Headers a Signature Version 4 carries: set by the signer, so a static header must not name them. */
const SIGNED_HEADERS = new Set(['x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256']);

/**
 * The keys of Amazon Bedrock's dialect: `region` on every bedrock provider and on no other, `auth: aws` (its
 * default) only there and without api_key_env (a Bedrock API key goes with `auth: bearer`), and no static header
 * that the signature sets; aws_credentials_env only where it signs.
 */
export function checkBedrock(id: string, provider: Record<string, unknown>, report: Report): void {
  const bedrock = provider['dialect'] === 'bedrock';
  const auth = provider['auth'];
  if (bedrock && provider['region'] === undefined) report(['providers', id], 'key', 'needs region, the AWS region its calls are signed for (e.g. region: us-east-1)');
  if (!bedrock && provider['region'] !== undefined) report(['providers', id, 'region'], 'key', 'is for providers of the bedrock dialect');
  if (auth === 'aws' && !bedrock) report(['providers', id, 'auth'], 'value', 'aws signs for Amazon Bedrock: only on a provider of the bedrock dialect');
  const signs = auth === 'aws' || (bedrock && auth === undefined);
  if (!signs && provider['aws_credentials_env'] !== undefined) report(['providers', id, 'aws_credentials_env'], 'key', 'is for auth: aws only (the AWS keys its signatures are made with)');
  if (!signs || !bedrock) return;
  if (hasKey(provider)) {
    const where = provider['api_key_env'] !== undefined ? ['providers', id, 'api_key_env'] : ['providers', id, 'endpoints'];
    report(where, 'key', 'auth aws (the bedrock default) signs with AWS credentials and sends no key: remove it, or set auth: bearer to send it as a Bedrock API key');
  }
  for (const name of Object.keys(mapAt(provider, 'headers'))) {
    if (SIGNED_HEADERS.has(name.toLowerCase())) report(['providers', id, 'headers', name], 'key', 'is set by the AWS signature and cannot be overridden');
  }
}

function mapAt(data: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = data[key];
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
