import { request } from 'node:http';
import t from 'tap';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';
import { rawExchange } from '../helpers/raw-http.js';
import { startServerProcess } from './server-process.js';

// Eight 16 MiB bodies through a real process: more than the default 60 s when the machine is busy.
t.setTimeout(180_000);

const MAX_BODY_BYTES = 16 * 1024 * 1024; // the default
const ask = JSON.stringify({ model: 'local/llama3.2', messages: [{ role: 'user', content: 'still there?' }] });

/** The body of issue 10: the default maximum size, all of it empty objects (JSON.parse: ~724 MB of heap). */
function emptyObjects(): Buffer {
  const head = '{"model":"local/llama3.2","messages":[';
  const count = Math.floor((MAX_BODY_BYTES - head.length - 2) / 3);
  return Buffer.from(`${head}${'{},'.repeat(count - 1)}{}]}`);
}

/**
 * The heaviest body the default bounds let through: 128 levels deep, 99,000 empty objects (the most heap per
 * byte; each counts two of the 200,000 values, for its brace and its comma), and the rest of the default
 * maximum size one string that V8 must store two bytes per character.
 */
function heaviestAllowed(): Buffer {
  const deep = `${'['.repeat(126)}${']'.repeat(126)}`;
  const objects = `[${'{},'.repeat(98_999)}{}]`;
  const head = `{"model":"local/llama3.2","deep":${deep},"objects":${objects},"messages":[{"role":"user","content":"😀`;
  const tail = '"}]}';
  return Buffer.from(`${head}${'x'.repeat(MAX_BODY_BYTES - Buffer.byteLength(head) - tail.length)}${tail}`);
}

function post(origin: string, body: Buffer): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      let text = '';
      res.on('data', (piece: Buffer) => (text += piece.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

t.test('under --max-old-space-size=256, four concurrent worst-case bodies of the default maximum size get answers, and the gateway lives on', async (t) => {
  // Slow enough that the four admitted bodies are all held at once.
  const provider = await startMockUpstream(async (_req, res) => {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    sendJson(res, 200, completionBody('llama3.2'));
  });
  t.teardown(() => provider.close());
  const server = await startServerProcess({ LOCAL_LLM_BASE_URL: `${provider.origin}/v1`, NODE_OPTIONS: '--max-old-space-size=256', LOG_LEVEL: 'warn' });
  t.teardown(() => server.child.kill('SIGKILL'));
  let exitCode: number | null | undefined;
  void server.exited.then((code) => (exitCode = code));

  const attack = emptyObjects();
  t.equal(attack.length <= MAX_BODY_BYTES, true, 'within MAX_BODY_BYTES');
  for (const answer of await Promise.all([1, 2, 3, 4].map(() => post(server.origin, attack)))) {
    t.equal(answer.status, 400);
    t.match(JSON.parse(answer.text), { error: { gateway_code: 'request_too_complex', param: 'messages' } });
  }

  const heaviest = heaviestAllowed();
  t.equal(heaviest.length, MAX_BODY_BYTES);
  const answers = await Promise.all([1, 2, 3, 4].map(() => post(server.origin, heaviest)));
  for (const answer of answers) {
    // Each is either served or told to come back: never a dropped connection.
    if (answer.status === 200) continue;
    t.equal(answer.status, 503);
    t.equal(answer.headers['x-should-retry'], 'true');
    t.match(JSON.parse(answer.text), { error: { gateway_code: 'overloaded' } });
  }
  t.ok(answers.some((answer) => answer.status === 200), `served: ${answers.map((answer) => answer.status).join(', ')}`);
  t.ok(provider.requests.every((received) => received.body.length > 0), 'what was admitted reached the provider whole');

  t.equal(exitCode, undefined, 'the process is still running');
  t.equal((await fetch(`${server.origin}/health`)).status, 200);
  const after = await fetch(`${server.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ask });
  t.equal(after.status, 200, 'and it still answers');
  t.notMatch(server.output(), /heap out of memory|FATAL ERROR/);
});

t.test('the process answers Expect: 100-continue from the headers: a body over MAX_BODY_BYTES is refused uninvited', async (t) => {
  const provider = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('llama3.2')));
  t.teardown(() => provider.close());
  const server = await startServerProcess({ LOCAL_LLM_BASE_URL: `${provider.origin}/v1`, MAX_BODY_BYTES: '1000' });
  t.teardown(() => server.child.kill('SIGKILL'));
  const head = (length: number) =>
    `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
  const refused = await rawExchange(server.origin, head(5000), 'x'.repeat(5000));
  t.same(refused.statuses, [413]);
  t.match(refused.received, /"gateway_code":"request_too_large"/);
  const accepted = await rawExchange(server.origin, head(Buffer.byteLength(ask)), ask);
  t.same(accepted.statuses, [100, 200]);
});
