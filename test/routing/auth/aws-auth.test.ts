import OpenAI, { APIError } from 'openai';
import t, { type Test } from 'tap';
import { startGateway } from '../../helpers/gateway.js';
import { isolateAwsEnv, TEST_AWS_KEYS, TEST_AWS_SESSION } from '../../helpers/aws-test-env.js';
import { startMockBedrock, textAnswer, textEvents, type BedrockCall } from '../../helpers/mock-bedrock.js';
import { checkSigV4, sigV4Verifier, type SigV4Credentials } from '../../helpers/sigv4-verify.js';

// Issue 38, auth: aws (the bedrock dialect's default): the engine signs each call where its final URL and body are
// known (src/routing/auth/aws-call.ts), naming no provider. The Bedrock mock checks every signature with the tests'
// independent verifier. Here: a base URL with its own path, keys from named variables, missing keys, a wrong
// region, redaction in streams. (bedrock-signed-client.test.ts has the official client's text, streams and ARNs.)

isolateAwsEnv();
process.env['AWS_REGION'] = 'eu-west-1'; // never the signing region

const routes = (provider: string, region = 'us-west-2') => `version: 1
providers:
  brk:
    dialect: bedrock
    region: ${region}
    base_url_env: BRK_BASE_URL
${provider}
models:
  brk/model: { upstream_model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", max_output_tokens: 4096 }
errors:
  "403": { status: 502, type: server_error, code: provider_auth_failed, gateway_code: provider_auth_failed, retry: false }
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

async function setup(t: Test, provider: string, env: Record<string, string>, identities: readonly SigV4Credentials[], options: { quote?: string; region?: string } = {}) {
  const quote = options.quote ?? '';
  const answer = (call: BedrockCall) => (call.stream ? { events: textEvents(['streamed', quote]), pieceSize: 9 } : { json: textAnswer(`signed${quote}`) });
  const mock = await startMockBedrock(answer, { verify: sigV4Verifier({ region: 'us-west-2', service: 'bedrock', credentials: identities }) });
  const gateway = await startGateway({ routes: routes(provider, options.region), env: { BRK_BASE_URL: `${mock.origin}/proxy/bedrock`, ...env } });
  t.teardown(() => Promise.all([gateway.close(), mock.close()]));
  const client = new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 });
  return { mock, gateway, client };
}

const ask = (client: OpenAI) => client.chat.completions.create({ model: 'brk/model', messages: [{ role: 'user', content: 'hi ✓' }] });

async function streamText(client: OpenAI): Promise<string> {
  const stream = await client.chat.completions.create({ model: 'brk/model', messages: [{ role: 'user', content: 'hi' }], stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  return text;
}

/** What the verifier computes for a call the mock kept. */
function verdict(call: BedrockCall, identities: readonly SigV4Credentials[]) {
  const raw = Object.entries(call.headers).flatMap(([name, value]) => [name, String(value)]);
  return checkSigV4({ method: call.method, target: call.rawPath, rawHeaders: raw, body: call.bodyBytes }, { region: 'us-west-2', service: 'bedrock', credentials: identities });
}

t.test('a base URL with its own path: signed over the whole path sent, each segment encoded once more; streamed too', async (t) => {
  const { mock, client, gateway } = await setup(t, '', { AWS_ACCESS_KEY_ID: TEST_AWS_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: TEST_AWS_KEYS.secretAccessKey }, [TEST_AWS_KEYS]);
  t.equal((await ask(client)).choices[0]!.message.content, 'signed');
  t.equal(await streamText(client), 'streamed');
  t.strictSame(mock.violations, []);
  t.same(mock.calls.map((call) => call.rawPath), ['/proxy/bedrock/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse', '/proxy/bedrock/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream']);
  const first = verdict(mock.calls[0]!, [TEST_AWS_KEYS]);
  t.equal(first.refused, undefined);
  t.equal(first.canonicalRequest!.split('\n')[1], '/proxy/bedrock/model/us.anthropic.claude-sonnet-4-5-20250929-v1%253A0/converse');
  t.match(first.canonicalRequest, /\nhost;x-amz-content-sha256;x-amz-date\n/, 'no session token with permanent keys');
  t.same(gateway.warnings, []);
  t.notOk(gateway.logLines.some((line) => line.includes(TEST_AWS_KEYS.secretAccessKey) || line.includes('Signature=')), 'no secret or signature in the log');
});

t.test('AWS_SESSION_TOKEN: the provider quoting the token or the secret back gets [redacted], in answers and streams', async (t) => {
  const quote = ` ${TEST_AWS_SESSION.sessionToken} ${TEST_AWS_SESSION.secretAccessKey}`;
  const env = { AWS_ACCESS_KEY_ID: TEST_AWS_SESSION.accessKeyId, AWS_SECRET_ACCESS_KEY: TEST_AWS_SESSION.secretAccessKey, AWS_SESSION_TOKEN: TEST_AWS_SESSION.sessionToken };
  const { client, gateway } = await setup(t, '', env, [TEST_AWS_SESSION], { quote });
  t.equal((await ask(client)).choices[0]!.message.content, 'signed [redacted] [redacted]');
  t.equal(await streamText(client), 'streamed [redacted] [redacted]');
  t.notOk(gateway.logLines.some((line) => line.includes(TEST_AWS_SESSION.sessionToken) || line.includes(TEST_AWS_SESSION.secretAccessKey)));
});

t.test('aws_credentials_env names other variables: those sign, the AWS_* ones are ignored', async (t) => {
  const named = '    aws_credentials_env: { access_key_id: BRK_KEY_ID, secret_access_key: BRK_SECRET, session_token: BRK_TOKEN }';
  const env = { BRK_KEY_ID: TEST_AWS_SESSION.accessKeyId, BRK_SECRET: TEST_AWS_SESSION.secretAccessKey, BRK_TOKEN: TEST_AWS_SESSION.sessionToken, AWS_ACCESS_KEY_ID: TEST_AWS_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: TEST_AWS_KEYS.secretAccessKey };
  const { mock, client } = await setup(t, named, env, [TEST_AWS_SESSION, TEST_AWS_KEYS]);
  t.equal((await ask(client)).choices[0]!.message.content, 'signed');
  t.equal(verdict(mock.calls[0]!, [TEST_AWS_SESSION, TEST_AWS_KEYS]).accessKeyId, TEST_AWS_SESSION.accessKeyId);
  t.equal(mock.calls[0]!.headers['x-amz-security-token'], TEST_AWS_SESSION.sessionToken);
});

async function notConfigured(t: Test, provider: string, env: Record<string, string>, named: string) {
  const { mock, client, gateway } = await setup(t, provider, env, [TEST_AWS_KEYS]);
  const warning = await gateway.logged(() => gateway.warnings.find((line) => line.includes(`brk (${named})`)));
  t.match(warning, /provider_not_configured/);
  const error = await ask(client).then(() => undefined, (caught: unknown) => caught);
  t.type(error, APIError);
  t.equal((error as APIError).status, 500);
  t.match((error as APIError).error, { code: 'provider_not_configured', provider: 'brk' });
  t.match((error as APIError).message, named);
  t.equal((error as APIError).headers?.get('x-should-retry'), 'false');
  t.equal(mock.calls.length, 0, 'nothing sent');
}

t.test('missing: named variables unset → the warning names them; 500 provider_not_configured, not retried, nothing sent', async (t) => {
  await notConfigured(t, '    aws_credentials_env: { access_key_id: BRK_KEY_ID, secret_access_key: BRK_SECRET }', { AWS_ACCESS_KEY_ID: TEST_AWS_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: TEST_AWS_KEYS.secretAccessKey }, 'BRK_KEY_ID, BRK_SECRET');
});

t.test('missing: half the default pair set → the unset one named (no other identity is looked for)', async (t) => {
  await notConfigured(t, '', { AWS_ACCESS_KEY_ID: TEST_AWS_KEYS.accessKeyId }, 'AWS_SECRET_ACCESS_KEY');
});

t.test('the provider region signs: one AWS does not expect is refused (403, through the error rules)', async (t) => {
  const { mock, client } = await setup(t, '', { AWS_ACCESS_KEY_ID: TEST_AWS_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: TEST_AWS_KEYS.secretAccessKey }, [TEST_AWS_KEYS], { region: 'eu-central-1' });
  const error = await ask(client).then(() => undefined, (caught: unknown) => caught);
  t.equal((error as APIError).status, 502);
  t.match((error as APIError).error, { code: 'provider_auth_failed', provider_status: 403 });
  t.equal(mock.calls.length, 1);
  t.match(verdict(mock.calls[0]!, [TEST_AWS_KEYS]).refused, /signed for region eu-central-1/);
});

t.test('an error that quotes the session token or the secret: [redacted] in the envelope, and in no log line', async (t) => {
  const env = { AWS_ACCESS_KEY_ID: TEST_AWS_SESSION.accessKeyId, AWS_SECRET_ACCESS_KEY: TEST_AWS_SESSION.secretAccessKey, AWS_SESSION_TOKEN: TEST_AWS_SESSION.sessionToken };
  const mock = await startMockBedrock(() => ({ status: 400, errorType: 'ValidationException', json: { message: `token ${TEST_AWS_SESSION.sessionToken} secret ${TEST_AWS_SESSION.secretAccessKey}` } }), {
    verify: sigV4Verifier({ region: 'us-west-2', service: 'bedrock', credentials: [TEST_AWS_SESSION] }),
  });
  const gateway = await startGateway({ routes: routes(''), env: { BRK_BASE_URL: mock.origin, ...env } });
  t.teardown(() => Promise.all([gateway.close(), mock.close()]));
  const response = await gateway.post({ model: 'brk/model', messages: [{ role: 'user', content: 'hi' }] });
  const text = await response.text();
  t.equal(response.status, 502);
  t.match(text, /token \[redacted\] secret \[redacted\]/);
  t.notOk(text.includes(TEST_AWS_SESSION.sessionToken) || text.includes(TEST_AWS_SESSION.secretAccessKey));
  await gateway.logged(() => gateway.requestLogs()[0]);
  t.notOk(gateway.logLines.some((line) => line.includes(TEST_AWS_SESSION.sessionToken) || line.includes(TEST_AWS_SESSION.secretAccessKey)));
});

t.test('failover between two endpoints: each attempt signed anew for the host it goes to, with the provider region', async (t) => {
  const verify = sigV4Verifier({ region: 'us-west-2', service: 'bedrock', credentials: [TEST_AWS_KEYS] });
  const busy = await startMockBedrock(() => ({ status: 503, errorType: 'ServiceUnavailableException', json: { message: 'busy' } }), { verify });
  const ready = await startMockBedrock(() => ({ json: textAnswer('from b') }), { verify });
  const endpoints = `    endpoints:
      - { name: a, base_url: https://bedrock-runtime.us-west-2.amazonaws.com, base_url_env: A_URL }
      - { name: b, base_url: https://bedrock-runtime.us-east-1.amazonaws.com, base_url_env: B_URL }`;
  const yaml = routes(endpoints).replace('    base_url_env: BRK_BASE_URL\n', '');
  const gateway = await startGateway({ routes: yaml, env: { A_URL: busy.origin, B_URL: ready.origin, AWS_ACCESS_KEY_ID: TEST_AWS_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: TEST_AWS_KEYS.secretAccessKey } });
  t.teardown(() => Promise.all([gateway.close(), busy.close(), ready.close()]));
  const client = new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 });
  // The endpoint is chosen by weight at random: ask until a request has met the busy one first (bounded).
  for (let i = 0; i < 30 && busy.calls.length === 0; i++) t.equal((await ask(client)).choices[0]!.message.content, 'from b');
  t.ok(busy.calls.length >= 1, 'the busy endpoint was tried, and its request failed over to the other');
  for (const call of [...busy.calls, ...ready.calls]) {
    const checked = verdict(call, [TEST_AWS_KEYS]);
    t.equal(checked.refused, undefined, 'accepted where it arrived');
    t.match(checked.canonicalRequest, new RegExp(`\\nhost:${call.headers['host']!.replace(/\./g, '\\.')}\\n`));
  }
});
