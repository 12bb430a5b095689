import type { OutgoingRequest } from '../../dialects/dialect.js';
import { gatewayError } from '../../wire/gateway-error.js';
import { awsSignatureHeaders, type AwsCredentials } from './aws-sigv4.js';

/** An `auth: aws` provider's signing, as the engine holds it: the region and service it signs for, and its credentials now. */
export interface AwsCallSigning {
  readonly region: string;
  readonly service: string;
  /** The credentials to sign with now; undefined while none are held. */
  current(): AwsCredentials | undefined;
}

/**
 * The headers that sign the outgoing request with AWS Signature Version 4 for the endpoint it goes to, at the moment it is sent
 * (each attempt signs again: another endpoint is another host, and a signature is good for 5 minutes). With no
 * credentials held (the default chain still fetching, or failing) the gateway answers its own 503
 * `provider_auth_failed` (retryable: another endpoint or a fallback may serve) and calls nobody, as for Google tokens.
 * Only the headers: a copy of the request would keep its body alive after a committed stream lets go of it (forget-body.ts).
 */
export async function awsSignature(providerId: string, signing: AwsCallSigning, baseUrl: string, outgoing: OutgoingRequest): Promise<Record<string, string>> {
  const credentials = signing.current();
  if (credentials === undefined) {
    throw gatewayError('provider_auth_failed', `The gateway holds no valid AWS credentials for the provider "${providerId}" (auth: aws); see its log.`, {
      provider: providerId,
    });
  }
  // The URL got sends to: the endpoint's base URL (its own path included) and the dialect's path.
  const url = new URL(`${baseUrl}/${outgoing.path}`);
  return awsSignatureHeaders({ url, body: outgoing.body, region: signing.region, service: signing.service, credentials });
}
