import { createHash } from 'node:crypto';
import { request } from 'node:http';
import t from 'tap';
import { awsSignatureHeaders, type AwsCredentials } from '../../../src/routing/auth/aws-sigv4.js';
import { isolateAwsEnv, TEST_AWS_KEYS, TEST_AWS_SESSION } from '../../helpers/aws-test-env.js';
import { startSignedRequestServer } from '../../helpers/signed-request-server.js';
import { checkSigV4, type SigV4Expectation } from '../../helpers/sigv4-verify.js';

// The gateway's signer (@smithy/signature-v4, as the official SDK signs) against the tests' independent verifier,
// over a real loopback request: the path as sent (base URL path included, the model id encoded once), the exact
// body bytes, temporary credentials. Issue 38, Signing.

isolateAwsEnv();
// Present on purpose: the provider's region signs, never AWS_REGION / AWS_DEFAULT_REGION.
process.env['AWS_REGION'] = 'eu-west-1';
process.env['AWS_DEFAULT_REGION'] = 'ap-south-1';

const EXPECT: SigV4Expectation = { region: 'us-west-2', service: 'bedrock', credentials: [TEST_AWS_KEYS, TEST_AWS_SESSION] };
const PROFILE = encodeURIComponent('us.anthropic.claude-sonnet-4-5-20250929-v1:0');
const ARN = encodeURIComponent('arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0');

/** Signs as the gateway does and sends it for real; the server's view of it. */
async function sendSigned(baseUrl: string, path: string, body: string, credentials: AwsCredentials, date?: Date) {
  const url = new URL(`${baseUrl}/${path}`);
  const headers = await awsSignatureHeaders({ url, body, region: 'us-west-2', service: 'bedrock', credentials, ...(date ? { date } : {}) });
  await new Promise<void>((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'gateway-test', 'x-request-id': 'r-1' } }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(Buffer.from(body));
  });
  return headers;
}

t.test('an inference-profile id and an ARN under a base URL with its own path: accepted; each segment encoded once more', async (t) => {
  const server = await startSignedRequestServer((_seen, res) => res.end('{}'));
  t.teardown(() => server.close());
  const body = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'héllo → 世界 🎉' }] }] });
  await sendSigned(`${server.origin}/proxy/bedrock`, `model/${PROFILE}/converse`, body, TEST_AWS_KEYS);
  await sendSigned(server.origin, `model/${ARN}/converse-stream`, body, TEST_AWS_SESSION);
  const [profile, arn] = server.seen;
  t.equal(profile!.target, '/proxy/bedrock/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse');
  const first = checkSigV4(profile!, EXPECT);
  t.equal(first.refused, undefined, 'accepted');
  t.equal(first.canonicalRequest!.split('\n')[1], '/proxy/bedrock/model/us.anthropic.claude-sonnet-4-5-20250929-v1%253A0/converse');
  t.equal(first.canonicalRequest!.split('\n')[2], '', 'no query string');
  const second = checkSigV4(arn!, EXPECT);
  t.equal(second.refused, undefined, 'accepted with a session token');
  t.match(second.canonicalRequest!.split('\n')[1], /^\/model\/arn%253Aaws%253Abedrock%253Aus-west-2%253A123456789012%253Aapplication-inference-profile%252Fus\./);
  t.match(second.canonicalRequest, /\nhost;x-amz-content-sha256;x-amz-date;x-amz-security-token\n/, 'host, the date, the payload hash and the token signed');
  t.equal(arn!.body.toString('utf8'), body, 'the exact bytes');
});

t.test('the headers: scope <date>/<provider region>/bedrock/aws4_request, x-amz-date now, the payload hash of the bytes, the token only when temporary', async (t) => {
  const body = '{"messages":[]}';
  const date = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
  const permanent = await awsSignatureHeaders({ url: new URL('https://bedrock-runtime.us-west-2.amazonaws.com/model/m/converse'), body, region: 'us-west-2', service: 'bedrock', credentials: TEST_AWS_KEYS, date });
  t.same(Object.keys(permanent).sort(), ['authorization', 'x-amz-content-sha256', 'x-amz-date']);
  t.equal(permanent['x-amz-date'], '20260102T030405Z');
  t.equal(permanent['x-amz-content-sha256'], createHash('sha256').update(body).digest('hex'));
  t.match(permanent['authorization'], /^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/20260102\/us-west-2\/bedrock\/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/);
  const temporary = await awsSignatureHeaders({ url: new URL('https://bedrock-runtime.us-west-2.amazonaws.com/model/m/converse'), body, region: 'us-west-2', service: 'bedrock', credentials: TEST_AWS_SESSION, date });
  t.equal(temporary['x-amz-security-token'], TEST_AWS_SESSION.sessionToken);
  const now = Date.now();
  const fresh = await awsSignatureHeaders({ url: new URL('http://127.0.0.1:9/model/m/converse'), body, region: 'us-west-2', service: 'bedrock', credentials: TEST_AWS_KEYS });
  const at = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(fresh['x-amz-date']!)!;
  t.ok(Math.abs(Date.UTC(+at[1]!, +at[2]! - 1, +at[3]!, +at[4]!, +at[5]!, +at[6]!) - now) < 2000, 'signed now');
  await t.rejects(awsSignatureHeaders({ url: new URL('http://127.0.0.1:9/model/m/converse?x=1'), body, region: 'us-west-2', service: 'bedrock', credentials: TEST_AWS_KEYS }), /no query string/);
});

t.test('a non-default port is part of the signed host; a signature made 6 minutes ago is refused', async (t) => {
  const server = await startSignedRequestServer((_seen, res) => res.end('{}'));
  t.teardown(() => server.close());
  await sendSigned(server.origin, 'model/m/converse', '{}', TEST_AWS_KEYS, new Date(Date.now() - 6 * 60_000));
  t.match(checkSigV4(server.seen[0]!, EXPECT).refused, /more than 5 minutes/);
  await sendSigned(server.origin, 'model/m/converse', '{}', TEST_AWS_KEYS);
  t.equal(checkSigV4(server.seen[1]!, EXPECT).refused, undefined);
  t.match(checkSigV4(server.seen[1]!, EXPECT).canonicalRequest, new RegExp(`\\nhost:127\\.0\\.0\\.1:${new URL(server.origin).port}\\n`));
});
