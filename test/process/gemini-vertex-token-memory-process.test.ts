// A hostile token endpoint against a gateway process with a 256 MiB heap (issue 34, item 4): a Vertex service
// account's token_uri that answers 200 with a 256 MiB body. The gateway reads 64 KiB of it, lets the connection
// go, logs why it holds no token and answers 503 provider_auth_failed; /health answers throughout.
import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { sendJson, startMockUpstream } from '../helpers/mock-upstream.js';
import { logLinesOf, startServerProcess, waitForOutput } from './server-process.js';
import { serviceAccountKeyFile, VERTEX_PATH, VERTEX_ROUTES } from '../helpers/vertex.js';

// Hundreds of MiB through a real process on a shared machine (when the bound fails).
t.setTimeout(180_000);

const CHILD = fileURLToPath(new URL('./gateway-child.ts', import.meta.url));
const MiB = 1024 * 1024;
const BODY_BYTES = 256 * MiB;

/** What the token endpoint wrote of each answer, and when its connection closed. */
const answers: { sent: number; closed: Promise<unknown> }[] = [];

/** `{"access_token":"xxx…` up to BODY_BYTES, as fast as the gateway reads it, until done or the gateway lets go. */
async function pour(res: ServerResponse): Promise<void> {
  const answer = { sent: 0, closed: once(res, 'close') };
  answers.push(answer);
  res.writeHead(200, { 'content-type': 'application/json' });
  const piece = Buffer.alloc(MiB, 'x');
  res.write('{"access_token":"');
  while (answer.sent < BODY_BYTES) {
    if (res.destroyed) return;
    answer.sent += piece.length;
    if (!res.write(piece)) await Promise.race([once(res, 'drain'), answer.closed]);
  }
  res.end('","expires_in":3599}');
}

t.test('under --max-old-space-size=256, a 256 MiB token response is cut off at 64 KiB; the request gets 503 provider_auth_failed; /health answers', async (t) => {
  const tokens = await startMockUpstream((_request, res) => pour(res));
  const vertex = await startMockUpstream((_request, res) => sendJson(res, 500, {}));
  t.teardown(() => Promise.all([tokens.close(), vertex.close()]));
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyFile = serviceAccountKeyFile(privateKey, `${tokens.origin}/token`);

  const server = await startServerProcess(
    { GATEWAY_ROUTES_YAML: VERTEX_ROUTES, GOOGLE_APPLICATION_CREDENTIALS: keyFile, VERTEX_BASE_URL: `${vertex.origin}${VERTEX_PATH}` },
    ['--max-old-space-size=256', '--import=tsx', CHILD],
  );
  t.teardown(() => server.child.kill('SIGKILL'));
  let exitCode: number | null | undefined;
  void server.exited.then((code) => (exitCode = code));

  const line = await waitForOutput(server, (output) => logLinesOf(output).find((entry) => String(entry['msg']).includes('no access token')), 60_000);
  t.match(line['msg'], /no access token \(the token endpoint answered with a body over 64 KiB\)/);
  await answers[0]!.closed;
  t.ok(answers[0]!.sent < 32 * MiB, `the gateway let the token endpoint go after ${(answers[0]!.sent / MiB).toFixed(1)} MiB were written`);

  const reply = await fetch(`${server.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'vertex/gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(reply.status, 503);
  t.match(await reply.json(), { error: { gateway_code: 'provider_auth_failed', provider: 'vertex', message: /no valid Google access token for the provider "vertex"/ } });
  t.equal(vertex.requests.length, 0, 'Vertex was not called');

  const peak = peakRssMiB(server.child.pid);
  if (peak !== undefined) t.ok(peak < 400, `the process's peak RSS stayed at ${peak.toFixed(0)} MiB (read whole, 256 MiB of body took it past 700)`);
  t.equal((await fetch(`${server.origin}/health`)).status, 200, '/health answers');
  t.equal(exitCode, undefined, 'the process is still running');
  t.notMatch(server.output(), /heap out of memory|FATAL ERROR/);
});

/** The peak resident set of a process so far (Linux: VmHWM), in MiB; undefined where /proc does not say. */
function peakRssMiB(pid: number | undefined): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}
