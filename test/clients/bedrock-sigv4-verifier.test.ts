import type { ServerResponse } from 'node:http';
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import t, { type Test } from 'tap';
import { isolateAwsEnv, TEST_AWS_KEYS, TEST_AWS_SESSION } from '../helpers/aws-test-env.js';
import { refuseSignature, startSignedRequestServer } from '../helpers/signed-request-server.js';
import { checkSigV4, signatureOf, type SigV4Expectation, type SignedRequestSeen } from '../helpers/sigv4-verify.js';

// The tests' SigV4 verifier (test/helpers/sigv4-verify.ts, node:crypto only) is checked here against what AWS
// itself defines: AWS's published test vector, and requests signed by the official AWS SDK for JavaScript v3
// (@aws-sdk/client-bedrock-runtime) sent to a loopback server. Accepted as signed; refused when a byte of the body,
// a header, the path or the date is changed. Nothing leaves the machine.

isolateAwsEnv();

const INFERENCE_PROFILE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const PROFILE_ARN = `arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/${INFERENCE_PROFILE}`;
const EXPECT: SigV4Expectation = { region: 'us-west-2', service: 'bedrock', credentials: [TEST_AWS_KEYS, TEST_AWS_SESSION] };

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => new Uint8Array(Buffer.from(text, 'utf8')),
);

function converseAnswer(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ output: { message: { role: 'assistant', content: [{ text: 'signed ok' }] } }, stopReason: 'end_turn', usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 }, metrics: { latencyMs: 1 } }));
}

function streamAnswer(res: ServerResponse): void {
  const event = (type: string, payload: unknown) =>
    codec.encode({
      headers: { ':message-type': { type: 'string', value: 'event' }, ':event-type': { type: 'string', value: type }, ':content-type': { type: 'string', value: 'application/json' } },
      body: new Uint8Array(Buffer.from(JSON.stringify(payload))),
    });
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
  for (const [type, payload] of [
    ['messageStart', { role: 'assistant', p: 'abcd' }],
    ['contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'signed ok' }, p: 'ab' }],
    ['messageStop', { stopReason: 'end_turn' }],
    ['metadata', { usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 }, metrics: { latencyMs: 1 } }],
  ] as const) {
    res.write(event(type, payload));
  }
  res.end();
}

async function sdkServer(t: Test) {
  const server = await startSignedRequestServer((seen, res) => {
    const refused = checkSigV4(seen, EXPECT).refused;
    if (refused) return refuseSignature(res, refused);
    if (seen.target.endsWith('/converse-stream')) return streamAnswer(res);
    converseAnswer(res);
  });
  t.teardown(() => server.close());
  return server;
}

function client(origin: string, credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }) {
  // HTTP/1.1 like the gateway's mocks (the client's default handler speaks HTTP/2).
  return new BedrockRuntimeClient({ region: 'us-west-2', endpoint: origin, credentials, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
}

const converse = (modelId: string) => new ConverseCommand({ modelId, messages: [{ role: 'user', content: [{ text: 'héllo, signed world' }] }], inferenceConfig: { maxTokens: 64 } });

t.test("AWS's published test vector (get-vanilla): the verifier's HMAC chain gives AWS's signature", async (t) => {
  const canonicalRequest = 'GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
  const { createHash } = await import('node:crypto');
  const stringToSign = ['AWS4-HMAC-SHA256', '20150830T123600Z', '20150830/us-east-1/service/aws4_request', createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  t.equal(signatureOf('wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', '20150830', 'us-east-1', 'service', stringToSign), '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31');
  const verdict = checkSigV4(
    {
      method: 'GET',
      target: '/',
      rawHeaders: ['Host', 'example.amazonaws.com', 'X-Amz-Date', '20150830T123600Z', 'Authorization', 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31'],
      body: Buffer.alloc(0),
    },
    { region: 'us-east-1', service: 'service', credentials: [{ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' }], now: () => Date.UTC(2015, 7, 30, 12, 36) },
  );
  t.equal(verdict.refused, undefined);
  t.equal(verdict.canonicalRequest, canonicalRequest);
});

t.test('ConverseCommand of the official SDK, with an inference-profile id and an ARN: accepted; the canonical URI encodes the path once more', async (t) => {
  const server = await sdkServer(t);
  for (const modelId of [INFERENCE_PROFILE, PROFILE_ARN]) {
    const answer = await client(server.origin, TEST_AWS_KEYS).send(converse(modelId));
    t.equal(answer.output?.message?.content?.[0]?.text, 'signed ok', `${modelId} accepted`);
  }
  const [profile, arn] = server.seen;
  t.equal(profile!.target, '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse', 'the SDK sends the id percent-encoded');
  t.match(checkSigV4(profile!, EXPECT).canonicalRequest, /^POST\n\/model\/us\.anthropic\.claude-sonnet-4-5-20250929-v1%253A0\/converse\n\n/);
  t.match(arn!.target, /^\/model\/arn%3Aaws%3Abedrock%3Aus-west-2%3A123456789012%3Aapplication-inference-profile%2Fus\.anthropic/);
  t.match(checkSigV4(arn!, EXPECT).canonicalRequest, /^POST\n\/model\/arn%253Aaws%253Abedrock%253Aus-west-2%253A123456789012%253Aapplication-inference-profile%252Fus\.anthropic\.claude-sonnet-4-5-20250929-v1%253A0\/converse\n/);
});

t.test('ConverseStreamCommand with temporary credentials: accepted, x-amz-security-token signed', async (t) => {
  const server = await sdkServer(t);
  const answer = await client(server.origin, TEST_AWS_SESSION).send(new ConverseStreamCommand({ modelId: INFERENCE_PROFILE, messages: [{ role: 'user', content: [{ text: 'stream' }] }] }));
  const texts: string[] = [];
  for await (const event of answer.stream ?? []) if (event.contentBlockDelta?.delta?.text) texts.push(event.contentBlockDelta.delta.text);
  t.same(texts, ['signed ok']);
  const seen = server.seen[0]!;
  t.equal(seen.target, '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream');
  t.match(checkSigV4(seen, EXPECT).canonicalRequest, /\nx-amz-security-token:IQoJ/);
  t.equal(checkSigV4(seen, { ...EXPECT, credentials: [{ ...TEST_AWS_SESSION, sessionToken: 'another-token' }] }).refused, "the session token is missing or not this identity's");
});

t.test('refused when anything signed is changed: a body byte, a header, the path, the date; the wrong region, key or clock', async (t) => {
  const server = await sdkServer(t);
  await client(server.origin, TEST_AWS_SESSION).send(converse(PROFILE_ARN));
  const original = server.seen[0]!;
  t.equal(checkSigV4(original, EXPECT).refused, undefined, 'the request as sent is accepted');
  const header = (seen: SignedRequestSeen, name: string) => seen.rawHeaders[seen.rawHeaders.findIndex((each, i) => i % 2 === 0 && each.toLowerCase() === name) + 1]!;
  const withHeader = (name: string, value: string): SignedRequestSeen => ({
    ...original,
    rawHeaders: original.rawHeaders.map((each, i) => (i % 2 === 1 && original.rawHeaders[i - 1]!.toLowerCase() === name ? value : each)),
  });
  const flipped = Buffer.from(original.body);
  flipped[10] = flipped[10]! ^ 1;
  const amzDate = header(original, 'x-amz-date');
  const laterDate = `${amzDate.slice(0, 13)}${(Number(amzDate.slice(13, 15)) + 1) % 60}`.padEnd(15, '0') + 'Z';
  const signature = /Signature=([0-9a-f]+)/.exec(header(original, 'authorization'))![1]!;
  const cases: [string, SignedRequestSeen, SigV4Expectation, RegExp][] = [
    ['a body byte', { ...original, body: flipped }, EXPECT, /x-amz-content-sha256 is not the sha256 of the body/],
    ['the x-amz-content-sha256 header dropped', withoutHeader(original, 'x-amz-content-sha256'), EXPECT, /signed header x-amz-content-sha256 is not in the request/],
    ['the host header', withHeader('host', 'bedrock-runtime.us-west-2.amazonaws.com'), EXPECT, /does not match/],
    ['the content-type header', withHeader('content-type', 'text/plain'), EXPECT, /does not match/],
    ['the path', { ...original, target: original.target.replace('/converse', '/converse-stream') }, EXPECT, /does not match/],
    ['the path encoded differently (%3a)', { ...original, target: original.target.replaceAll('%3A', '%3a') }, EXPECT, /does not match/],
    ['a query string added', { ...original, target: `${original.target}?x=1` }, EXPECT, /does not match/],
    ['the date', withHeader('x-amz-date', laterDate), EXPECT, /does not match/],
    ['the signature', withHeader('authorization', header(original, 'authorization').replace(signature, signature.replace(/^./, (c) => (c === '0' ? '1' : '0')))), EXPECT, /does not match/],
    ['another region', original, { ...EXPECT, region: 'us-east-1' }, /signed for region us-west-2/],
    ['service bedrock-runtime', original, { ...EXPECT, service: 'bedrock-runtime' }, /signed for service bedrock/],
    ['another secret', original, { ...EXPECT, credentials: [{ ...TEST_AWS_SESSION, secretAccessKey: 'x'.repeat(40) }] }, /does not match/],
    ['the server clock 6 minutes on', original, { ...EXPECT, now: () => Date.now() + 6 * 60_000 }, /more than 5 minutes/],
    ['no session token', withoutHeader(original, 'x-amz-security-token'), EXPECT, /x-amz-security-token is not in the request/],
  ];
  for (const [what, seen, expect, refusal] of cases) t.match(checkSigV4(seen, expect).refused, refusal, `refused: ${what}`);
  // A request the server refuses reaches the SDK as AWS's error.
  const refusing = await startSignedRequestServer((_seen, res) => refuseSignature(res, 'The request signature we calculated does not match the signature you provided.'));
  t.teardown(() => refusing.close());
  await t.rejects(client(refusing.origin, TEST_AWS_KEYS).send(converse(INFERENCE_PROFILE)), { name: 'InvalidSignatureException' });
});

function withoutHeader(seen: SignedRequestSeen, name: string): SignedRequestSeen {
  const raw: string[] = [];
  for (let i = 0; i + 1 < seen.rawHeaders.length; i += 2) if (seen.rawHeaders[i]!.toLowerCase() !== name) raw.push(seen.rawHeaders[i]!, seen.rawHeaders[i + 1]!);
  return { ...seen, rawHeaders: raw };
}
