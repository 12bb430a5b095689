// The real server process (dist/server.js): SIGTERM with requests still waiting on their provider, at every
// phase, past SHUTDOWN_GRACE_MS. Each gets its answer (503 shutting_down, or a stream's final event once its
// first event went out) and one log line before the process exits 0; none is a bare closed connection.
import { request, type IncomingHttpHeaders } from 'node:http';
import t from 'tap';
import { startMockUpstream } from '../helpers/mock-upstream.js';
import { logLinesOf, startServerProcess } from './server-process.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';

type Phase = 'headers' | 'body' | 'stream-headers' | 'first-event' | 'mid-stream';
const PHASES: readonly Phase[] = ['headers', 'body', 'stream-headers', 'first-event', 'mid-stream'];

t.test('SIGTERM past the grace period: every request waiting on its provider is answered shutting_down and logged once', async (t) => {
  const reached = new Set<string>();
  const provider = await startMockUpstream((req, res) => {
    const phase = String(req.headers['x-request-id']).replace('drain-', '') as Phase;
    if (phase === 'body') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 });
      res.write('{"id":"chatcmpl-half",');
    } else if (phase === 'first-event') {
      startEventStream(res);
    } else if (phase === 'mid-stream') {
      startEventStream(res);
      res.write(sseBody([chunk('llama3.2', { content: 'Hel' })], { done: false }));
    }
    reached.add(phase);
  });
  t.teardown(() => provider.close());
  const server = await startServerProcess({ LOCAL_LLM_BASE_URL: `${provider.origin}/v1`, SHUTDOWN_GRACE_MS: '300' });
  t.teardown(() => server.child.kill('SIGKILL'));

  const answers = PHASES.map((phase) => {
    const stream = phase !== 'headers' && phase !== 'body';
    const body = JSON.stringify({ model: 'local/llama3.2', messages: [{ role: 'user', content: 'hi' }], stream });
    return new Promise<{ phase: Phase; status: number | null; headers: IncomingHttpHeaders; text: string }>((resolve) => {
      const req = request(`${server.origin}/v1/chat/completions`, {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'x-request-id': `drain-${phase}` },
      });
      req.on('error', () => resolve({ phase, status: null, headers: {}, text: '' }));
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (piece: string) => (text += piece));
        res.on('error', () => {});
        res.on('close', () => resolve({ phase, status: res.statusCode ?? null, headers: res.headers, text }));
      });
      req.end(body);
    });
  });
  for (let i = 0; i < 500 && reached.size < PHASES.length; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  t.equal(reached.size, PHASES.length, 'the provider holds every request in its phase');
  await new Promise((resolve) => setTimeout(resolve, 100)); // the gateway reads the headers and half body sent so far
  server.child.kill('SIGTERM');

  for (const answer of await Promise.all(answers)) {
    // A stream commits with its first event: one whose provider sent only its 200 is still answered 503.
    if (answer.phase === 'mid-stream') {
      t.equal(answer.status, 200, `${answer.phase}: the stream had begun`);
      const last = answer.text.trim().split('\n\n').at(-1) ?? '';
      t.match(JSON.parse(last.replace(/^data: /, '') || '{}'), { error: { gateway_code: 'shutting_down', provider: 'local' } }, `${answer.phase}: final event`);
    } else {
      t.equal(answer.status, 503, `${answer.phase}: 503, not a closed connection`);
      t.equal(answer.headers['x-should-retry'], 'true', `${answer.phase}: x-should-retry`);
      t.match(JSON.parse(answer.text || '{}'), { error: { gateway_code: 'shutting_down', provider: 'local', origin: 'gateway' } }, `${answer.phase}: envelope`);
    }
  }
  t.equal(await server.exited, 0);
  const lines = logLinesOf(server.output()).filter((line) => line['msg'] === 'request');
  for (const phase of PHASES) {
    const mine = lines.filter((line) => line['request_id'] === `drain-${phase}`);
    t.equal(mine.length, 1, `${phase}: one log line`);
    t.match(mine[0], { gateway_code: 'shutting_down', provider: 'local' }, `${phase}: logged as shutting_down`);
  }
  t.match(logLinesOf(server.output()).find((line) => line['msg'] === 'stopped'), { forced_stops: PHASES.length });
});
