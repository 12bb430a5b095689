import OpenAI, { APIError } from 'openai';
import t, { type Test } from 'tap';
import { isolateAwsEnv, TEST_AWS_KEYS, TEST_AWS_SESSION } from '../helpers/aws-test-env.js';
import { startGateway } from '../helpers/gateway.js';
import { startMockBedrock, textAnswer, textEvents, type BedrockAnswer, type BedrockCall } from '../helpers/mock-bedrock.js';
import { checkSigV4, sigV4Verifier, type SigV4Credentials } from '../helpers/sigv4-verify.js';

// Issue 38 end to end: the official openai client → the gateway → the Bedrock mock, whose verify hook checks every
// request's AWS Signature Version 4 with the tests' independent verifier (proved against the official AWS SDK in
// bedrock-sigv4-verifier.test.ts). A `{dialect: bedrock, region: us-west-2}` provider signs by default (auth: aws);
// the inference-profile id and an ARN go percent-encoded in the path and double-encoded in the canonical request.

isolateAwsEnv();
process.env['AWS_REGION'] = 'eu-west-1'; // never the signing region
process.env['AWS_DEFAULT_REGION'] = 'ap-south-1';

const PROFILE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const ARN = `arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/${PROFILE}`;
const routes = (auth = '') => `version: 1
providers:
  brk:
    dialect: bedrock
    region: us-west-2
    base_url_env: BEDROCK_BASE_URL
${auth}
models:
  brk/arn: { upstream_model: "${ARN}", max_output_tokens: 8192 }
  brk/sonnet: { upstream_model: "${PROFILE}", max_output_tokens: 64000, reasoning: budget }
errors:
  "403": { status: 502, type: server_error, code: provider_auth_failed, gateway_code: provider_auth_failed, retry: false }
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

const answer = (call: BedrockCall): BedrockAnswer => (call.stream ? { events: textEvents(['Signed', ' stream']), pieceSize: 5 } : { json: textAnswer('Signed answer') });

async function setup(t: Test, env: Record<string, string>, identities: readonly SigV4Credentials[], auth = '') {
  const expect = { region: 'us-west-2', service: 'bedrock', credentials: identities };
  const mock = await startMockBedrock(answer, auth ? { bearer: 'bedrock-api-key-ABSKQmVkcm9ja0FQSUtleS1example' } : { verify: sigV4Verifier(expect) });
  const gateway = await startGateway({ routes: routes(auth), env: { BEDROCK_BASE_URL: mock.origin, ...env } });
  t.teardown(() => Promise.all([gateway.close(), mock.close()]));
  const client = new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 });
  return { mock, gateway, client, expect };
}

async function streamText(client: OpenAI, model: string): Promise<string> {
  const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  return text;
}

/** The canonical request the mock's verifier computed for a call the mock kept. */
function canonical(call: BedrockCall, expect: Parameters<typeof checkSigV4>[1]): string {
  const raw = Object.entries(call.headers).flatMap(([name, value]) => (Array.isArray(value) ? value.flatMap((each) => [name, each]) : [name, String(value)]));
  return checkSigV4({ method: call.method, target: call.rawPath, rawHeaders: raw, body: call.bodyBytes }, expect).canonicalRequest ?? '';
}

t.test('environment keys: Converse and ConverseStream signed and accepted, for an inference profile and an ARN', async (t) => {
  const { mock, client, gateway, expect } = await setup(t, { AWS_ACCESS_KEY_ID: TEST_AWS_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: TEST_AWS_KEYS.secretAccessKey }, [TEST_AWS_KEYS]);
  const whole = await client.chat.completions.create({ model: 'brk/sonnet', messages: [{ role: 'user', content: 'Hi' }] });
  t.equal(whole.choices[0]!.message.content, 'Signed answer');
  t.equal(await streamText(client, 'brk/sonnet'), 'Signed stream');
  t.equal((await client.chat.completions.create({ model: 'brk/arn', messages: [{ role: 'user', content: 'Hi' }] })).choices[0]!.message.content, 'Signed answer');
  t.equal(await streamText(client, 'brk/arn'), 'Signed stream');
  t.strictSame(mock.violations, []);
  t.same(mock.calls.map((call) => call.rawPath), [
    '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse',
    '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream',
    `/model/${encodeURIComponent(ARN)}/converse`,
    `/model/${encodeURIComponent(ARN)}/converse-stream`,
  ]);
  t.equal(canonical(mock.calls[1]!, expect).split('\n')[1], '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%253A0/converse-stream');
  t.match(canonical(mock.calls[2]!, expect).split('\n')[1], /^\/model\/arn%253Aaws%253Abedrock%253Aus-west-2%253A123456789012%253Aapplication-inference-profile%252Fus\./);
  t.match(mock.calls[0]!.headers['authorization'], /^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/us-west-2\/bedrock\/aws4_request, /);
  t.same(gateway.warnings, []);
  t.notOk(gateway.logLines.some((line) => line.includes(TEST_AWS_KEYS.secretAccessKey) || line.includes('AWS4-HMAC-SHA256')), 'no secret, no signature in the log');
});

t.test('temporary keys: x-amz-security-token sent and signed; a quoted token comes back [redacted]', async (t) => {
  const env = { AWS_ACCESS_KEY_ID: TEST_AWS_SESSION.accessKeyId, AWS_SECRET_ACCESS_KEY: TEST_AWS_SESSION.secretAccessKey, AWS_SESSION_TOKEN: TEST_AWS_SESSION.sessionToken };
  const expect = { region: 'us-west-2', service: 'bedrock', credentials: [TEST_AWS_SESSION] };
  const mock = await startMockBedrock(() => ({ json: textAnswer(`token ${TEST_AWS_SESSION.sessionToken}`) }), { verify: sigV4Verifier(expect) });
  const gateway = await startGateway({ routes: routes(), env: { BEDROCK_BASE_URL: mock.origin, ...env } });
  t.teardown(() => Promise.all([gateway.close(), mock.close()]));
  const client = new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 });
  t.equal((await client.chat.completions.create({ model: 'brk/sonnet', messages: [{ role: 'user', content: 'Hi' }] })).choices[0]!.message.content, 'token [redacted]');
  t.equal(mock.calls[0]!.headers['x-amz-security-token'], TEST_AWS_SESSION.sessionToken);
  t.match(canonical(mock.calls[0]!, expect), /\nhost;x-amz-content-sha256;x-amz-date;x-amz-security-token\n/);
});

t.test('a refused signature (the mock knows other keys) is the 403 row of the error rules, the message verbatim, no secret in it', async (t) => {
  const { mock, client } = await setup(t, { AWS_ACCESS_KEY_ID: TEST_AWS_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: TEST_AWS_KEYS.secretAccessKey }, [TEST_AWS_SESSION]);
  const error = await client.chat.completions.create({ model: 'brk/sonnet', messages: [{ role: 'user', content: 'Hi' }] }).then(() => undefined, (caught: unknown) => caught);
  t.type(error, APIError);
  t.equal((error as APIError).status, 502);
  t.match((error as APIError).error, { code: 'provider_auth_failed', provider: 'brk', provider_status: 403, provider_code: 'InvalidSignatureException' });
  t.match((error as APIError).message, /unknown access key id AKIAIOSFODNN7EXAMPLE/);
  t.notOk(JSON.stringify((error as APIError).error).includes(TEST_AWS_KEYS.secretAccessKey));
  t.equal(mock.calls.length, 1);
});

t.test('auth: bearer with a Bedrock API key: one Authorization: Bearer header, no x-amz-* headers, though AWS keys are set', async (t) => {
  const { mock, client } = await setup(
    t,
    { AWS_BEARER_TOKEN_BEDROCK: 'bedrock-api-key-ABSKQmVkcm9ja0FQSUtleS1example', AWS_ACCESS_KEY_ID: TEST_AWS_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: TEST_AWS_KEYS.secretAccessKey },
    [],
    '    auth: bearer\n    api_key_env: AWS_BEARER_TOKEN_BEDROCK',
  );
  t.equal((await client.chat.completions.create({ model: 'brk/sonnet', messages: [{ role: 'user', content: 'Hi' }] })).choices[0]!.message.content, 'Signed answer');
  t.equal(await streamText(client, 'brk/sonnet'), 'Signed stream');
  t.strictSame(mock.violations, [], 'the bearer checked, no x-amz-date / x-amz-security-token / x-amz-content-sha256');
  for (const call of mock.calls) t.same(Object.keys(call.headers).filter((name) => name.startsWith('x-amz-')), []);
});

t.test('no keys and no AWS default credential chain: the warning names brk and the variables; 500 provider_not_configured, nothing sent', async (t) => {
  const { mock, client, gateway } = await setup(t, {}, [TEST_AWS_KEYS]);
  const warning = await gateway.logged(() => gateway.warnings.find((line) => line.includes('brk (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)')));
  t.match(warning, /not configured/);
  for (const stream of [false, true]) {
    const error = await client.chat.completions.create({ model: 'brk/sonnet', messages: [{ role: 'user', content: 'Hi' }], stream }).then(() => undefined, (caught: unknown) => caught);
    t.equal((error as APIError).status, 500);
    t.match((error as APIError).error, { code: 'provider_not_configured', provider: 'brk' });
    t.match((error as APIError).message, /AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY/);
    t.equal((error as APIError).headers?.get('x-should-retry'), 'false');
  }
  t.equal(mock.calls.length, 0, 'nothing sent');
});
