import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import t from 'tap';
import { startGateway } from '../../helpers/gateway.js';
import { isolateAwsEnv } from '../../helpers/aws-test-env.js';
import { startMockSts, type StsCredentials } from './mock-sts.js';
import { startMockBedrock, textAnswer, type BedrockCall } from '../../helpers/mock-bedrock.js';
import { checkSigV4, sigV4Verifier, type SignedRequestSeen } from '../../helpers/sigv4-verify.js';

// Issue 38: with no keys in the environment, auth: aws takes credentials as the AWS SDKs do. Here the web-identity
// flow of EKS IRSA (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN) against a loopback STS (AWS_ENDPOINT_URL_STS), giving
// short-lived credentials: the gateway signs with them, and refreshes them before they expire without a request
// waiting. AWS_REGION is set (the STS client's region) and is still not the signing region.

const { dir } = isolateAwsEnv();
const tokenFile = join(dir, 'web-identity-token');
writeFileSync(tokenFile, 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6Z2F0ZXdheSJ9.c2lnbmF0dXJl');
process.env['AWS_WEB_IDENTITY_TOKEN_FILE'] = tokenFile;
process.env['AWS_ROLE_ARN'] = 'arn:aws:iam::123456789012:role/gateway';
process.env['AWS_ROLE_SESSION_NAME'] = 'gateway-test';
process.env['AWS_REGION'] = 'eu-west-1';

const ROUTES = `version: 1
providers:
  brk:
    dialect: bedrock
    region: us-west-2
    base_url_env: BRK_BASE_URL
models:
  brk/model: { upstream_model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", max_output_tokens: 4096 }
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

const LIFETIME_MS = 4000;
const issued: StsCredentials[] = [];
const issue = (n: number): StsCredentials => {
  const credentials = {
    accessKeyId: `ASIATEMPORARY${String(n).padStart(7, '0')}`,
    secretAccessKey: `temporary-secret-${n}-wJalrXUtnFEMI/K7MDENG/bPxRfiCY`,
    sessionToken: `FwoGZXIvYXdzEXAMPLE-session-${n}-IQoJb3JpZ2luX2VjEXAMPLE==`,
    expiration: new Date(Date.now() + LIFETIME_MS),
  };
  issued.push(credentials);
  return credentials;
};

function seenOf(call: BedrockCall): SignedRequestSeen {
  return { method: call.method, target: call.rawPath, rawHeaders: Object.entries(call.headers).flatMap(([name, value]) => [name, String(value)]), body: call.bodyBytes };
}

async function until(what: string, condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

t.test('web identity: signed with the role credentials STS gives, refreshed before they expire', async (t) => {
  const sts = await startMockSts(issue);
  process.env['AWS_ENDPOINT_URL_STS'] = sts.origin;
  const expect = { region: 'us-west-2', service: 'bedrock', credentials: () => issued };
  const server = await startMockBedrock(
    (call) => {
      const identity = checkSigV4(seenOf(call), expect).accessKeyId;
      return { json: textAnswer(`ok ${issued.find((each) => each.accessKeyId === identity)!.sessionToken}`) };
    },
    { verify: sigV4Verifier(expect) },
  );
  const gateway = await startGateway({ routes: ROUTES, env: { BRK_BASE_URL: server.origin } });
  t.teardown(() => Promise.all([gateway.close(), server.close(), sts.close()]));
  const client = new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 });
  const ask = () => client.chat.completions.create({ model: 'brk/model', messages: [{ role: 'user', content: 'hi' }] });

  await gateway.logged(() => gateway.logLines.find((line) => line.includes('credentials obtained from the AWS default credential chain')));
  t.ok(gateway.logLines.some((line) => line.includes('brk sign with the AWS default credential chain')), 'the start-up line says where credentials come from');
  t.same(gateway.warnings, [], 'not reported missing');
  t.match(sts.calls[0], { action: 'AssumeRoleWithWebIdentity', roleArn: 'arn:aws:iam::123456789012:role/gateway', webIdentityToken: /^eyJhbGciOiJSUzI1NiJ9\./, roleSessionName: 'gateway-test' });
  t.equal((await ask()).choices[0]!.message.content, 'ok [redacted]', 'a quoted session token is redacted');
  t.equal(checkSigV4(seenOf(server.calls[0]!), expect).accessKeyId, issued[0]!.accessKeyId);
  t.match(checkSigV4(seenOf(server.calls[0]!), expect).canonicalRequest, /\nx-amz-security-token:FwoGZXIvYXdzEXAMPLE-session-0-/);

  await until('the refresh', () => sts.calls.length >= 2);
  const gap = sts.calls[1]!.at - sts.calls[0]!.at;
  t.ok(gap >= 1500 && gap < LIFETIME_MS, `refreshed at half the ${LIFETIME_MS} ms life, before expiry (${gap} ms)`);
  t.equal((await ask()).choices[0]!.message.content, 'ok [redacted]');
  const second = checkSigV4(seenOf(server.calls[1]!), expect);
  t.equal(second.refused, undefined);
  t.ok(issued.slice(1).some((each) => each.accessKeyId === second.accessKeyId), 'signed with refreshed credentials');
  t.not(second.accessKeyId, issued[0]!.accessKeyId, 'not the first, soon expired, credentials');
  t.notOk(gateway.logLines.some((line) => issued.some((each) => line.includes(each.secretAccessKey) || line.includes(each.sessionToken))), 'no secret or token in the log');
});

t.test('a slow STS blocks no request: while the first credentials are on their way, 503 provider_auth_failed (retryable), nothing sent', async (t) => {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const sts = await startMockSts(issue, (n) => (n === 0 ? released : Promise.resolve()));
  process.env['AWS_ENDPOINT_URL_STS'] = sts.origin;
  const server = await startMockBedrock(() => ({ json: textAnswer('ok') }), { verify: sigV4Verifier({ region: 'us-west-2', service: 'bedrock', credentials: () => issued }) });
  const gateway = await startGateway({ routes: ROUTES, env: { BRK_BASE_URL: server.origin } });
  t.teardown(() => Promise.all([gateway.close(), server.close(), sts.close()]));
  await until('the STS call', () => sts.calls.length === 1);
  const startedAt = Date.now();
  const response = await gateway.post({ model: 'brk/model', messages: [{ role: 'user', content: 'hi' }] });
  t.ok(Date.now() - startedAt < 2000, 'answered at once, not after the credentials');
  t.equal(response.status, 503);
  t.equal(response.headers.get('x-should-retry'), 'true');
  t.match(await response.json(), { error: { code: 'provider_auth_failed', provider: 'brk' } });
  t.equal(server.calls.length, 0, 'nothing sent');
  release();
  await gateway.logged(() => gateway.logLines.find((line) => line.includes('credentials obtained from the AWS default credential chain')));
  t.equal((await gateway.post({ model: 'brk/model', messages: [{ role: 'user', content: 'hi' }] })).status, 200);
  t.same(server.calls.length, 1);
});
