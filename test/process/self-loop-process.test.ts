// dist/server.js on the shipped routes.yaml, its openai provider pointed at its own port by the gateway's own
// override (GATEWAY_OPENAI_BASE_URL): one start-up warning names the provider, and a request is answered 508
// loop_detected at the first hop back (the shipped 508 rule passes the hop's answer on, never retried).
import t from 'tap';
import { freePort } from '../helpers/free-port.js';
import { logLinesOf, startServerProcess, waitForOutput } from './server-process.js';

t.test('a provider base URL that is the gateway itself: warned at start-up, and a request is refused as a loop', async (t) => {
  const port = await freePort();
  const server = await startServerProcess({
    PORT: String(port),
    LOG_FORMAT: 'json',
    OPENAI_API_KEY: 'sk-provider-key-for-tests-7f3a',
    GATEWAY_OPENAI_BASE_URL: `http://localhost:${port}/v1`,
    // Where a Claude Code user's shell points: the client's variable, which the gateway does not read.
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
  });
  t.teardown(() => server.child.kill('SIGKILL'));
  const warning = await waitForOutput(server, () => logLinesOf(server.output()).find((line) => line['level'] === 40 && /own address/.test(String(line['msg']))));
  t.match(warning['msg'], new RegExp(`^provider "openai": its base URL http://localhost:${port} is this gateway's own address`));
  const response = await fetch(`${server.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(response.status, 508);
  t.equal(response.headers.get('x-should-retry'), 'false');
  t.match(await response.json(), { error: { gateway_code: 'loop_detected', provider: 'openai', provider_status: 508 } });
  const requests = await waitForOutput(server, () => {
    const lines = logLinesOf(server.output()).filter((line) => line['msg'] === 'request' && line['path'] === '/v1/chat/completions');
    return lines.length >= 2 ? lines : undefined;
  });
  t.equal(requests.length, 2, 'the caller\'s request and the one hop back, nothing more');
  t.match(requests[0], { status: 508, gateway_code: 'loop_detected', attempts: null }, 'the hop back: refused, no provider call');
  const ownWarnings = logLinesOf(server.output()).filter((line) => line['level'] === 40 && /own address/.test(String(line['msg'])));
  t.equal(ownWarnings.length, 1, 'one warning, for openai only: the anthropic provider does not read ANTHROPIC_BASE_URL');
});
