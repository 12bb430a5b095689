// Issue 34, items 1 and 3, in process: what all streams hold at once is bounded (MAX_STREAM_BYTES_IN_FLIGHT), the
// stream that would pass the bound ends with overloaded while the others go on; a Responses stream keeps only its
// bounded echo of the request, charged to MAX_BODY_BYTES_IN_FLIGHT until it ends.
import type { ServerResponse } from 'node:http';
import t from 'tap';
import { ConfigError, defaultStreamBytesInFlight, readServerConfig } from '../../src/server-config.js';
import { MAX_ECHO_CHARS } from '../../src/endpoints/responses/response-object.js';
import { PROVIDER_KEY, startGateway } from '../helpers/gateway.js';
import { drained } from '../../scripts/bench/drained.js';
import { sendJson, startMockUpstream } from '../helpers/mock-upstream.js';
import { startEventStream } from '../helpers/sse-upstream.js';

const MiB = 1024 * 1024;
const ROUTES = `version: 1
providers:
  gem: { dialect: gemini, base_url: http://127.0.0.1:9/v1beta, base_url_env: GEM_URL, api_key_env: MOCK_API_KEY }
  oai: { base_url: http://127.0.0.1:9/v1, base_url_env: MOCK_BASE_URL, api_key_env: MOCK_API_KEY }
models:
  gem/held: { upstream_model: gemini-held, max_output_tokens: 8192 }
  gem/huge: { upstream_model: gemini-huge, max_output_tokens: 8192 }
  gem/pour: { upstream_model: gemini-pour, max_output_tokens: 8192 }
  oai/gpt: { upstream_model: gpt-test }
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;
const RECORD_HEAD = 'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"';
const RECORD_TAIL = '"}]},"index":0,"finishReason":"STOP"}]}\r\n\r\n';

/** Writes `text` as fast as the reader takes it; false when the reader let go first. */
async function write(res: ServerResponse, text: string): Promise<boolean> {
  if (res.destroyed) return false;
  if (!res.write(text)) await drained(res);
  return !res.destroyed;
}

const chatStream = (model: string) => JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream: true });

t.test('MAX_STREAM_BYTES_IN_FLIGHT: the stream that would pass it is answered overloaded, the others go on, and it all comes back', async (t) => {
  let releaseHeld!: () => void;
  const heldMayEnd = new Promise<void>((resolve) => (releaseHeld = resolve));
  let heldWritten!: () => void;
  const heldIsWritten = new Promise<void>((resolve) => (heldWritten = resolve));
  const provider = await startMockUpstream(async (request, res) => {
    startEventStream(res);
    if (request.url.includes('gemini-held')) {
      // One part of 600 KB, held unfinished (8 x 600 KB of the 8 MiB) until the test lets it end.
      await write(res, RECORD_HEAD + 'a'.repeat(600_000));
      heldWritten();
      await heldMayEnd;
      res.end(RECORD_TAIL);
    } else if (request.url.includes('gemini-huge')) {
      // One part that alone, with its copies, would cost more than all streams may hold.
      res.end(RECORD_HEAD + 'h'.repeat(1_200_000) + RECORD_TAIL);
    } else {
      // A part that never ends, until the gateway lets go.
      while (await write(res, RECORD_HEAD + 'p'.repeat(64 * 1024)));
    }
  });
  t.teardown(() => provider.close());
  const gateway = await startGateway({ routes: ROUTES, env: { GEM_URL: `${provider.origin}/v1beta`, MOCK_API_KEY: PROVIDER_KEY }, maxStreamBytesInFlight: 8 * MiB });
  t.teardown(() => gateway.close());

  const held = gateway.post(chatStream('gem/held'));
  await heldIsWritten;
  const poured = await gateway.post(chatStream('gem/pour'));
  t.equal(poured.status, 503, 'the stream that would pass the bound, before its first event: 503');
  t.equal(poured.headers.get('x-should-retry'), 'true');
  t.equal(poured.headers.get('retry-after'), '1');
  t.match(await poured.json(), { error: { gateway_code: 'overloaded', provider: 'gem', message: /MAX_STREAM_BYTES_IN_FLIGHT/ } });

  releaseHeld();
  const answer = await held;
  t.equal(answer.status, 200, 'the stream already holding its share goes on');
  const text = await answer.text();
  t.ok(text.includes('a'.repeat(600_000)), 'and its whole part reaches the caller');
  t.match(text, /data: \[DONE\]\n\n$/);

  const huge = await gateway.post(chatStream('gem/huge'));
  t.equal(huge.status, 502, 'a stream that alone would pass the bound');
  t.match(await huge.json(), { error: { gateway_code: 'invalid_upstream_response', provider: 'gem', message: /would hold more than all streams may hold together \(MAX_STREAM_BYTES_IN_FLIGHT, 8388608 bytes\)/ } });

  // Everything came back: a second held part fits only if the first one's charge (and the refused one's) went back.
  const second = await gateway.post(chatStream('gem/held'));
  t.equal(second.status, 200, 'the budget came back when the streams ended');
  await second.text();
  t.strictSame(gateway.tracked(), { inFlight: 0, stopHooks: 0 });
});

t.test('a Responses stream keeps only its echo of the request, charged to MAX_BODY_BYTES_IN_FLIGHT until it ends', async (t) => {
  const open: ServerResponse[] = [];
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-test', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const provider = await startMockUpstream((_request, res) => {
    startEventStream(res);
    res.write(chunk({ role: 'assistant', content: 'hi' }));
    open.push(res);
  });
  t.teardown(() => provider.close());
  // Four bodies of ~220 KB fit at once; an open stream keeps its ~220 KB echo.
  const gateway = await startGateway({ routes: ROUTES, upstreamOrigin: provider.origin, env: { GEM_URL: `${provider.origin}/v1beta` }, maxBodyBytesInFlight: 1_000_000 });
  t.teardown(() => gateway.close());
  const body = JSON.stringify({ model: 'oai/gpt', instructions: 'i'.repeat(220_000), input: 'hi', stream: true });
  const post = () => fetch(`${gateway.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  const readers: ReadableStreamDefaultReader<Uint8Array>[] = [];
  for (let i = 0; i < 4; i++) {
    const response = await post();
    t.equal(response.status, 200, `stream ${i} is under way`);
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    t.ok(first.includes(`"instructions":"${'i'.repeat(1000)}`), 'an echo within MAX_ECHO_CHARS is whole');
    readers.push(reader);
  }
  const refused = await post();
  t.equal(refused.status, 503, 'four open streams keep their echoes: a fifth body does not fit beside them');
  t.match(await refused.json(), { error: { gateway_code: 'overloaded' } });

  for (const res of open.splice(0)) res.end(chunk({}, 'stop') + 'data: [DONE]\n\n');
  for (const reader of readers) while (!(await reader.read()).done);
  // Their responses close just after their last bytes: the charge goes back then.
  for (let i = 0; i < 400 && gateway.tracked().inFlight > 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  const served = await post();
  t.equal(served.status, 200, 'once they ended, their charge is back');
  await served.body!.cancel();
});

t.test('the echo is bounded: the largest fields past MAX_ECHO_CHARS are echoed empty, the others as sent', async (t) => {
  const provider = await startMockUpstream((_request, res) =>
    sendJson(res, 200, { id: 'c', object: 'chat.completion', created: 1, model: 'gpt-test', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }),
  );
  t.teardown(() => provider.close());
  const gateway = await startGateway({ routes: ROUTES, upstreamOrigin: provider.origin, env: { GEM_URL: `${provider.origin}/v1beta` } });
  t.teardown(() => gateway.close());
  const tool = (name: string) => ({ type: 'function', name, description: 'd'.repeat(20_000), parameters: { type: 'object', properties: {} } });
  const request = { model: 'oai/gpt', instructions: 'i'.repeat(MAX_ECHO_CHARS), input: 'hi', metadata: { run: 'echo' }, tools: [tool('a'), tool('b')] };
  const response = await fetch(`${gateway.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
  t.equal(response.status, 200);
  const object = (await response.json()) as Record<string, unknown>;
  t.equal(object['instructions'], null, 'the largest field is echoed empty');
  t.match(object, { metadata: { run: 'echo' }, tools: [{ name: 'a' }, { name: 'b' }], output: [{ type: 'message' }] }, 'the rest as sent');
});

t.test('MAX_STREAM_BYTES_IN_FLIGHT is read and checked; its default is an eighth of the heap limit', async (t) => {
  t.equal(readServerConfig({ MAX_STREAM_BYTES_IN_FLIGHT: String(100 * MiB) }).maxStreamBytesInFlight, 100 * MiB);
  t.equal(readServerConfig({}).maxStreamBytesInFlight, defaultStreamBytesInFlight());
  t.equal(defaultStreamBytesInFlight(448 * MiB), 56 * MiB, 'under --max-old-space-size=256 (a 448 MiB heap_size_limit): 56 MiB');
  t.throws(() => readServerConfig({ MAX_STREAM_BYTES_IN_FLIGHT: '0' }), new ConfigError('MAX_STREAM_BYTES_IN_FLIGHT must be an integer from 1 to 9007199254740991, got "0"'));
});
