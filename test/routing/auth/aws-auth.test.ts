import type { ServerResponse } from 'node:http';
import OpenAI, { APIError } from 'openai';
import t, { type Test } from 'tap';
import { startGateway } from '../../helpers/gateway.js';
import { isolateAwsEnv, TEST_AWS_KEYS, TEST_AWS_SESSION } from '../../helpers/aws-test-env.js';
import { refuseSignature, startSignedRequestServer } from '../../helpers/signed-request-server.js';
import { checkSigV4, type SigV4Credentials, type SignedRequestSeen } from '../../helpers/sigv4-verify.js';

// Issue 38, auth: aws, generic in the engine: any provider whose routes.yaml says `auth: aws` has each call signed
// (SigV4, service bedrock, the provider's region) where its final URL and body are known. Here an openai-dialect
// provider behind a loopback server that checks the signature with the independent verifier; the bedrock dialect's
// own end-to-end tests use the same verifier on its mock. Credentials: environment keys, named variables, missing.

isolateAwsEnv();
process.env['AWS_REGION'] = 'eu-west-1'; // never the signing region

const routes = (provider: string) => `version: 1
providers:
  brk:
    base_url: https://bedrock-runtime.us-west-2.amazonaws.com/v1
    base_url_env: BRK_BASE_URL
    auth: aws
    region: us-west-2
${provider}
models:
  brk/model: { upstream_model: m }
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

const completion = (content: string) => ({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });

function answer(seen: SignedRequestSeen, res: ServerResponse, identities: readonly SigV4Credentials[], quote = ''): void {
  const refused = checkSigV4(seen, { region: 'us-west-2', service: 'bedrock', credentials: identities }).refused;
  if (refused) return refuseSignature(res, refused);
  if (JSON.parse(seen.body.toString('utf8')).stream === true) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: `streamed${quote}` }, finish_reason: null }] })}\n\n`);
    res.end('data: [DONE]\n\n');
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(completion(`signed${quote}`)));
}

async function setup(t: Test, provider: string, env: Record<string, string>, identities: readonly SigV4Credentials[], quote = '') {
  const server = await startSignedRequestServer((seen, res) => answer(seen, res, identities, quote));
  const gateway = await startGateway({ routes: routes(provider), env: { BRK_BASE_URL: `${server.origin}/proxy/v1`, ...env } });
  t.teardown(() => Promise.all([gateway.close(), server.close()]));
  const client = new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 });
  return { server, gateway, client };
}

const ask = (client: OpenAI) => client.chat.completions.create({ model: 'brk/model', messages: [{ role: 'user', content: 'hi ✓' }] });

t.test('environment keys: every call signed for the provider region, the base URL path in the canonical URI; streamed too', async (t) => {
  const { server, client, gateway } = await setup(t, '', { AWS_ACCESS_KEY_ID: TEST_AWS_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: TEST_AWS_KEYS.secretAccessKey }, [TEST_AWS_KEYS]);
  t.equal((await ask(client)).choices[0]!.message.content, 'signed');
  const stream = await client.chat.completions.create({ model: 'brk/model', messages: [{ role: 'user', content: 'hi' }], stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  t.equal(text, 'streamed');
  t.equal(server.seen.length, 2);
  const verdict = checkSigV4(server.seen[0]!, { region: 'us-west-2', service: 'bedrock', credentials: [TEST_AWS_KEYS] });
  t.equal(verdict.canonicalRequest!.split('\n')[1], '/proxy/v1/chat/completions');
  t.match(verdict.canonicalRequest, /\nhost;x-amz-content-sha256;x-amz-date\n/, 'no session token with permanent keys');
  t.same(gateway.warnings, []);
  t.notOk(gateway.logLines.some((line) => line.includes(TEST_AWS_KEYS.secretAccessKey) || line.includes('Signature=')), 'no secret or signature in the log');
});

t.test('AWS_SESSION_TOKEN: x-amz-security-token sent and signed; the provider quoting the secret or the token gets [redacted]', async (t) => {
  const quote = ` ${TEST_AWS_SESSION.sessionToken} ${TEST_AWS_SESSION.secretAccessKey}`;
  const { server, client, gateway } = await setup(t, '', { AWS_ACCESS_KEY_ID: TEST_AWS_SESSION.accessKeyId, AWS_SECRET_ACCESS_KEY: TEST_AWS_SESSION.secretAccessKey, AWS_SESSION_TOKEN: TEST_AWS_SESSION.sessionToken }, [TEST_AWS_SESSION], quote);
  t.equal((await ask(client)).choices[0]!.message.content, 'signed [redacted] [redacted]');
  const stream = await client.chat.completions.create({ model: 'brk/model', messages: [{ role: 'user', content: 'hi' }], stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  t.equal(text, 'streamed [redacted] [redacted]');
  t.match(checkSigV4(server.seen[0]!, { region: 'us-west-2', service: 'bedrock', credentials: [TEST_AWS_SESSION] }).canonicalRequest, /\nx-amz-security-token:IQoJ/);
  t.notOk(gateway.logLines.some((line) => line.includes(TEST_AWS_SESSION.sessionToken) || line.includes(TEST_AWS_SESSION.secretAccessKey)));
});

t.test('aws_credentials_env names other variables: those sign, the AWS_* ones are ignored', async (t) => {
  const named = '    aws_credentials_env: { access_key_id: BRK_KEY_ID, secret_access_key: BRK_SECRET, session_token: BRK_TOKEN }';
  const { server, client } = await setup(
    t,
    named,
    { BRK_KEY_ID: TEST_AWS_SESSION.accessKeyId, BRK_SECRET: TEST_AWS_SESSION.secretAccessKey, BRK_TOKEN: TEST_AWS_SESSION.sessionToken, AWS_ACCESS_KEY_ID: TEST_AWS_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: TEST_AWS_KEYS.secretAccessKey },
    [TEST_AWS_SESSION],
  );
  t.equal((await ask(client)).choices[0]!.message.content, 'signed');
  t.equal(checkSigV4(server.seen[0]!, { region: 'us-west-2', service: 'bedrock', credentials: [TEST_AWS_SESSION] }).accessKeyId, TEST_AWS_SESSION.accessKeyId);
});

async function notConfigured(t: Test, provider: string, env: Record<string, string>, named: string) {
  const { server, client, gateway } = await setup(t, provider, env, [TEST_AWS_KEYS]);
  const warning = await gateway.logged(() => gateway.warnings.find((line) => line.includes(`brk (${named})`)));
  t.match(warning, /provider_not_configured/);
  const error = await ask(client).then(() => undefined, (caught: unknown) => caught);
  t.type(error, APIError);
  t.equal((error as APIError).status, 500);
  t.match((error as APIError).error, { code: 'provider_not_configured', provider: 'brk' });
  t.match((error as APIError).message, named);
  t.equal((error as APIError).headers?.get('x-should-retry'), 'false');
  t.equal(server.seen.length, 0, 'nothing sent');
}

t.test('missing: named variables unset → the warning names them; 500 provider_not_configured, not retried, nothing sent', async (t) => {
  await notConfigured(t, '    aws_credentials_env: { access_key_id: BRK_KEY_ID, secret_access_key: BRK_SECRET }', { AWS_ACCESS_KEY_ID: TEST_AWS_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: TEST_AWS_KEYS.secretAccessKey }, 'BRK_KEY_ID, BRK_SECRET');
});

t.test('missing: half the default pair set → the unset one named (no other identity is looked for)', async (t) => {
  await notConfigured(t, '', { AWS_ACCESS_KEY_ID: TEST_AWS_KEYS.accessKeyId }, 'AWS_SECRET_ACCESS_KEY');
});

t.test('missing: no keys and the AWS default credential chain finds none → brk (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)', async (t) => {
  await notConfigured(t, '', {}, 'AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY');
});

t.test('a wrong region is refused by the verifier: the gateway answers through the error rules', async (t) => {
  const server = await startSignedRequestServer((seen, res) => answer(seen, res, [TEST_AWS_KEYS]));
  const gateway = await startGateway({ routes: routes('').replace('region: us-west-2', 'region: eu-central-1'), env: { BRK_BASE_URL: `${server.origin}/v1`, AWS_ACCESS_KEY_ID: TEST_AWS_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: TEST_AWS_KEYS.secretAccessKey } });
  t.teardown(() => Promise.all([gateway.close(), server.close()]));
  const response = await gateway.post({ model: 'brk/model', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(response.status, 502);
  t.equal(server.seen.length, 1);
  t.match(checkSigV4(server.seen[0]!, { region: 'us-west-2', service: 'bedrock', credentials: [TEST_AWS_KEYS] }).refused, /signed for region eu-central-1/);
});
