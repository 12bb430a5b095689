import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';
import { parseExposition, sumOf, valueOf } from '../helpers/prometheus.js';
import { logLinesOf, runServerExpectingExit, startServerProcess, streamUnderWay, waitForOutput, type ServerProcess } from './server-process.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';

const ask = JSON.stringify({ model: 'local/llama3.2', messages: [{ role: 'user', content: 'hi' }] });

/** `node dist/server.js` with WORKERS=2 in front of a mock local provider. */
async function startCluster(t: Test, env: Record<string, string> = {}) {
  const provider = await startMockUpstream(async (req, res) => {
    if ((JSON.parse(req.body) as { stream?: boolean }).stream) {
      startEventStream(res);
      for (let i = 0; i < 10 && !res.destroyed; i++) {
        res.write(sseBody([chunk('llama3.2', { content: `${i} ` })], { done: false }));
        await sleep(100);
      }
      res.end('data: [DONE]\n\n');
      return;
    }
    sendJson(res, 200, completionBody('llama3.2'));
  });
  t.teardown(() => provider.close());
  const server = await startServerProcess({ WORKERS: '2', LOCAL_LLM_BASE_URL: `${provider.origin}/v1`, ...env });
  // Killing the primary disconnects the workers, and a worker whose primary is gone exits.
  t.teardown(() => server.child.kill('SIGKILL'));
  return server;
}

/** One chat request on a connection of its own, so the primary hands each to the next worker. */
async function askOnce(server: ServerProcess): Promise<number> {
  const response = await fetch(`${server.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', connection: 'close' },
    body: ask,
  });
  await response.text();
  return response.status;
}

async function scrape(server: ServerProcess) {
  const response = await fetch(`${server.origin}/metrics`, { headers: { connection: 'close' } });
  return { status: response.status, samples: parseExposition(await response.text()) };
}

/** Pids of the workers that answered chat requests, from their log lines. */
function chatPids(server: ServerProcess): Set<unknown> {
  return new Set(logLinesOf(server.output()).filter((line) => line['msg'] === 'request' && line['path'] === '/v1/chat/completions').map((line) => line['pid']));
}

/** Pids of the workers the primary saw start listening, in order. */
function listeningPids(server: ServerProcess): number[] {
  return logLinesOf(server.output()).filter((line) => line['msg'] === 'worker listening').map((line) => line['worker_pid'] as number);
}

/** The service is announced when its first worker listens; these tests want every worker up. */
async function bothListening(server: ServerProcess): Promise<[number, number]> {
  return waitForOutput(server, () => {
    const pids = listeningPids(server);
    return pids.length >= 2 ? (pids.slice(0, 2) as [number, number]) : undefined;
  });
}

t.test('two workers share the port; /metrics shows the figures of both, summed', async (t) => {
  const server = await startCluster(t);
  t.equal(server.output().match(/listening on http/g)?.length, 1, 'the start-up line, once, from the primary');
  t.match(server.output(), /listening on http:\/\/127\.0\.0\.1:\d+ \(routes sha256 \w+, 2 workers\)/);
  await bothListening(server);

  const statuses = [];
  for (let i = 0; i < 20; i++) statuses.push(await askOnce(server));
  t.same(statuses, Array(20).fill(200));
  await waitForOutput(server, (output) => (logLinesOf(output).filter((line) => line['msg'] === 'request' && line['path'] === '/v1/chat/completions').length >= 20 ? true : undefined));
  const served = chatPids(server);
  t.equal(served.size, 2, 'both workers answered');
  t.notOk(served.has(server.child.pid), 'the primary answers nothing itself');

  // Each scrape lands on either worker; every one must show all 20.
  for (let i = 0; i < 4; i++) {
    const { status, samples } = await scrape(server);
    t.equal(status, 200);
    t.equal(sumOf(samples, 'gateway_requests_total'), 20, `scrape ${i + 1}: the sum over both workers`);
    t.equal(valueOf(samples, 'gateway_requests_total', { model: 'local/llama3.2', provider: 'local', status: '200', gateway_code: '', caller: 'anonymous' }), 20);
    t.equal(valueOf(samples, 'gateway_tokens_total', { model: 'local/llama3.2', kind: 'prompt' }), 20 * 12);
    t.equal(valueOf(samples, 'gateway_requests_in_flight'), 0);
    t.ok(valueOf(samples, 'process_resident_memory_bytes') ?? valueOf(samples, 'nodejs_heap_size_used_bytes'), 'process metrics of the workers');
  }
  const scrapeLines = () => logLinesOf(server.output()).filter((line) => line['msg'] === 'request' && line['path'] === '/metrics');
  // Log lines are batched: wait for the four scrapes' lines.
  await waitForOutput(server, () => (scrapeLines().length >= 4 ? true : undefined));
  const metricsPids = new Set(scrapeLines().map((line) => line['pid']));
  t.equal(metricsPids.size, 2, 'both workers answered a scrape with the aggregate');
});

t.test('a worker killed with SIGKILL is replaced and the service keeps answering', async (t) => {
  const server = await startCluster(t);
  const [victim, survivor] = await bothListening(server);
  process.kill(victim, 'SIGKILL');
  const firstReplacement = await waitForOutput(server, () => listeningPids(server).find((pid) => pid !== victim && pid !== survivor));
  // A second death in a row waits twice as long.
  process.kill(firstReplacement, 'SIGKILL');
  const replacement = await waitForOutput(server, () => listeningPids(server).find((pid) => ![victim, survivor, firstReplacement].includes(pid)));
  t.match(
    logLinesOf(server.output()).filter((line) => line['msg'] === 'worker died; replacing it'),
    [
      { worker_pid: victim, signal: 'SIGKILL', restart_in_ms: 100 },
      { worker_pid: firstReplacement, signal: 'SIGKILL', restart_in_ms: 200 },
    ],
  );

  const statuses = [];
  for (let i = 0; i < 10; i++) statuses.push(await askOnce(server));
  t.same(statuses, Array(10).fill(200));
  await waitForOutput(server, () => (logLinesOf(server.output()).filter((line) => line['msg'] === 'request' && line['path'] === '/v1/chat/completions').length >= 10 ? true : undefined));
  t.ok(chatPids(server).has(replacement), 'the replacement answers');
  t.ok(chatPids(server).has(survivor), 'and so does the survivor');
  t.notOk(chatPids(server).has(victim) || chatPids(server).has(firstReplacement), 'the dead answer nothing');
  t.equal(sumOf((await scrape(server)).samples, 'gateway_requests_total'), 10, 'the aggregate over the live workers');
});

t.test('SIGTERM to the primary: every worker drains its requests, none is replaced, exit 0', async (t) => {
  const server = await startCluster(t, { SHUTDOWN_GRACE_MS: '10000' });
  await bothListening(server);
  const stream = await streamUnderWay(server.origin, JSON.stringify({ model: 'local/llama3.2', messages: [{ role: 'user', content: 'count slowly' }], stream: true }));
  server.child.kill('SIGTERM');
  const text = await stream.rest();
  t.match(text, /9 /, 'every chunk arrived');
  t.ok(text.endsWith('data: [DONE]\n\n'), 'the stream completed normally');
  t.equal(await server.exited, 0);
  const lines = logLinesOf(server.output());
  t.equal(lines.filter((line) => line['msg'] === 'worker stopped').length, 2);
  t.equal(lines.filter((line) => line['msg'] === 'worker listening').length, 2, 'no worker was replaced');
  t.notOk(lines.some((line) => line['msg'] === 'worker died; replacing it'));
  await t.rejects(fetch(`${server.origin}/health`), 'the listener is closed');
});

t.test('workers that cannot listen: the primary exits 1 instead of replacing them forever', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  const { port } = blocker.address() as AddressInfo;
  const { code, output } = await runServerExpectingExit({ WORKERS: '2', PORT: String(port) });
  t.equal(code, 1);
  t.match(output, /cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE/);
  t.equal(output.match(/cannot listen/g)?.length, 1, 'one line, printed by the primary for the first worker that failed');
  t.notMatch(output, /listening on http/);
});
