// A Bedrock stream whose message prelude announces 2 GiB, against a gateway process with a 256 MiB heap and
// MAX_UPSTREAM_BODY_BYTES of 1 MiB (issue 38): the message is refused on its 12-byte prelude, nothing of its size
// is allocated or waited for, the provider's connection is let go while it still pours bytes, the caller gets the
// final error event (after the first content) or the JSON 502 (before it), and /health answers throughout.
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { BEDROCK_ROUTES } from '../helpers/bedrock-gateway.js';
import { PROVIDER_KEY } from '../helpers/gateway.js';
import { encodeEvent, textEvents } from '../helpers/mock-bedrock.js';
import { preludeAnnouncing } from '../helpers/event-stream-encoder.js';
import { startServerProcess } from './server-process.js';

t.setTimeout(180_000);

const CHILD = fileURLToPath(new URL('./gateway-child.ts', import.meta.url));
const MiB = 1024 * 1024;
const FLOOD_BYTES = 512 * MiB;

/** What the provider wrote of each answer, and when its connection closed. */
const answers: { sent: number; closed: Promise<unknown> }[] = [];

/** The first content (or not), then a prelude announcing 2 GiB, then bytes as fast as the gateway reads them. */
async function pour(res: ServerResponse, withContent: boolean): Promise<void> {
  const answer = { sent: 0, closed: once(res, 'close') };
  answers.push(answer);
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
  const events = textEvents(['Hello']);
  res.write(Buffer.concat((withContent ? events.slice(0, 2) : events.slice(0, 1)).map(encodeEvent)));
  res.write(preludeAnnouncing(2 ** 31));
  const piece = Buffer.alloc(MiB, 'x');
  while (answer.sent < FLOOD_BYTES) {
    if (res.destroyed) return;
    answer.sent += piece.length;
    if (!res.write(piece)) await Promise.race([once(res, 'drain'), answer.closed]);
  }
  res.end();
}

t.test('under --max-old-space-size=256, a 2 GiB announced message is refused at its prelude, before and after the first content', async (t) => {
  let calls = 0;
  const bedrock = createServer((req, res) => {
    req.resume();
    req.on('end', () => void pour(res, calls++ === 0));
  });
  await new Promise<void>((resolve) => bedrock.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    bedrock.closeAllConnections();
    bedrock.close();
  });
  const server = await startServerProcess(
    {
      GATEWAY_ROUTES_YAML: BEDROCK_ROUTES,
      BEDROCK_BASE_URL: `http://127.0.0.1:${(bedrock.address() as AddressInfo).port}`,
      MOCK_API_KEY: PROVIDER_KEY,
      MAX_UPSTREAM_BODY_BYTES: String(MiB),
      AWS_EC2_METADATA_DISABLED: 'true',
    },
    ['--max-old-space-size=256', '--import=tsx', CHILD],
  );
  t.teardown(() => server.child.kill('SIGKILL'));
  let exitCode: number | null | undefined;
  void server.exited.then((code) => (exitCode = code));
  const post = () =>
    fetch(`${server.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'brk/nova', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });

  const after = await post();
  t.equal(after.status, 200);
  const text = await after.text();
  t.match(text, /"content":"Hello"/);
  t.match(text, /"gateway_code":"invalid_upstream_response"/);
  t.match(text, /larger than 1048576/);
  await answers[0]!.closed;
  t.ok(answers[0]!.sent < 64 * MiB, `the gateway let the provider go after ${(answers[0]!.sent / MiB).toFixed(0)} MiB were written`);

  const before = await post();
  t.equal(before.status, 502);
  t.match(await before.json(), { error: { gateway_code: 'invalid_upstream_response', provider: 'brk' } });
  await answers[1]!.closed;
  t.ok(answers[1]!.sent < 64 * MiB, `the second was let go after ${(answers[1]!.sent / MiB).toFixed(0)} MiB`);

  t.equal((await fetch(`${server.origin}/health`)).status, 200, '/health answers');
  t.equal(exitCode, undefined, 'the process is still running');
  t.notMatch(server.output(), /heap out of memory|FATAL ERROR/);
});
