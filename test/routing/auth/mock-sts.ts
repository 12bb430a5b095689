import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Temporary credentials as STS issues them. */
export interface StsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
  readonly expiration: Date;
}

export interface StsCall {
  readonly at: number;
  readonly action: string | null;
  readonly roleArn: string | null;
  readonly webIdentityToken: string | null;
  readonly roleSessionName: string | null;
}

export interface MockSts {
  /** http://127.0.0.1:PORT, for AWS_ENDPOINT_URL_STS. */
  readonly origin: string;
  readonly calls: StsCall[];
  close(): Promise<void>;
}

/**
 * A loopback STS for the web-identity flow (EKS IRSA): AssumeRoleWithWebIdentity in the AWS query protocol (a form
 * POST, an XML answer), as the AWS SDK's STS client speaks it. `issue(n)` gives the n-th call's credentials (from 0),
 * once `gate(n)` settles (a slow STS).
 */
export async function startMockSts(issue: (n: number) => StsCredentials, gate: (n: number) => Promise<void> = async () => {}): Promise<MockSts> {
  const calls: StsCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      calls.push({ at: Date.now(), action: form.get('Action'), roleArn: form.get('RoleArn'), webIdentityToken: form.get('WebIdentityToken'), roleSessionName: form.get('RoleSessionName') });
      if (form.get('Action') !== 'AssumeRoleWithWebIdentity') {
        res.writeHead(400, { 'content-type': 'text/xml' });
        res.end('<ErrorResponse><Error><Type>Sender</Type><Code>InvalidAction</Code><Message>unknown action</Message></Error><RequestId>r</RequestId></ErrorResponse>');
        return;
      }
      const n = calls.length - 1;
      await gate(n);
      const credentials = issue(n);
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.end(`<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <SubjectFromWebIdentityToken>system:serviceaccount:gateway:gateway</SubjectFromWebIdentityToken>
    <AssumedRoleUser>
      <Arn>arn:aws:sts::123456789012:assumed-role/gateway/${form.get('RoleSessionName') ?? 'session'}</Arn>
      <AssumedRoleId>AROAEXAMPLE:${form.get('RoleSessionName') ?? 'session'}</AssumedRoleId>
    </AssumedRoleUser>
    <Credentials>
      <AccessKeyId>${credentials.accessKeyId}</AccessKeyId>
      <SecretAccessKey>${credentials.secretAccessKey}</SecretAccessKey>
      <SessionToken>${credentials.sessionToken}</SessionToken>
      <Expiration>${credentials.expiration.toISOString()}</Expiration>
    </Credentials>
    <Audience>sts.amazonaws.com</Audience>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
