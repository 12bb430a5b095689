import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { startMockUpstream } from '../helpers/mock-upstream.js';
import { runServerExpectingExit, SERVER, startServerProcess, streamUnderWay } from './server-process.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';

const streamAsk = JSON.stringify({ model: 'local/llama3.2', messages: [{ role: 'user', content: 'count slowly' }], stream: true });

/** A provider that streams `count` chunks, one every `everyMs`. */
async function slowProvider(count: number, everyMs: number) {
  return startMockUpstream(async (_req, res) => {
    startEventStream(res);
    for (let i = 0; i < count && !res.destroyed; i++) {
      res.write(sseBody([chunk('llama3.2', { content: `${i} ` })], { done: false }));
      await sleep(everyMs);
    }
    res.end('data: [DONE]\n\n');
  });
}

t.test('binding a non-loopback address without caller keys refuses to start with one line', async (t) => {
  const { code, output } = await runServerExpectingExit({ HOST: '0.0.0.0' });
  t.equal(code, 1);
  t.equal(output.trim().split('\n').length, 1, output);
  t.match(output, /refusing to serve anonymously on 0\.0\.0\.0.*GATEWAY_API_KEYS/);
});

/** Starts a stream of `chunks` chunks (100 ms apart) through the server process, then sends SIGTERM mid-stream. */
async function sigtermMidStream(t: Test, chunks: number, graceMs: number) {
  const provider = await slowProvider(chunks, 100);
  t.teardown(() => provider.close());
  const server = await startServerProcess({ LOCAL_LLM_BASE_URL: `${provider.origin}/v1`, SHUTDOWN_GRACE_MS: String(graceMs) });
  t.teardown(() => server.child.kill('SIGKILL'));
  const stream = await streamUnderWay(server.origin, streamAsk);
  const signalledAt = Date.now();
  server.child.kill('SIGTERM');
  return { server, signalledAt, text: await stream.rest() };
}

t.test('SIGTERM lets a running stream finish, then the process exits 0', async (t) => {
  const { server, text } = await sigtermMidStream(t, 10, 10_000);
  t.match(text, /9 /, 'every chunk arrived');
  t.ok(text.endsWith('data: [DONE]\n\n'), 'the stream completed normally');
  t.notMatch(text, /shutting_down/);
  t.equal(await server.exited, 0);
  await t.rejects(fetch(`${server.origin}/health`), 'the listener is closed');
});

t.test('a stream still running when SHUTDOWN_GRACE_MS ends gets a final shutting_down event; exit 0', async (t) => {
  const { server, signalledAt, text } = await sigtermMidStream(t, 100, 300);
  const last = text.trim().split('\n\n').at(-1)!;
  t.match(JSON.parse(last.slice('data: '.length)), { error: { gateway_code: 'shutting_down', origin: 'gateway' } });
  t.equal(await server.exited, 0);
  t.ok(Date.now() - signalledAt < 5000, 'the drain gave up at its grace period');
});

t.test('a caller sending its headers one byte at a time loses its socket within seconds', async (t) => {
  const server = await startServerProcess({ HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '2000' });
  t.teardown(() => server.child.kill('SIGKILL'));
  const { port } = new URL(server.origin);
  const started = Date.now();
  const closedAfter = await new Promise<number>((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    const request = 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Padding: ' + 'a'.repeat(100);
    let i = 0;
    const timer = setInterval(() => {
      if (i < request.length && !socket.destroyed) socket.write(request[i++]!);
    }, 100);
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve(Date.now() - started);
    });
  });
  t.ok(closedAfter < 4000, `closed after ${closedAfter} ms`);
});

t.test('a caller trickling its body loses its socket within seconds', async (t) => {
  const server = await startServerProcess({ HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '2000' });
  t.teardown(() => server.child.kill('SIGKILL'));
  const { port } = new URL(server.origin);
  const started = Date.now();
  const closedAfter = await new Promise<number>((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    socket.write('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n');
    const timer = setInterval(() => !socket.destroyed && socket.write('{'), 100);
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve(Date.now() - started);
    });
  });
  t.ok(closedAfter < 5000, `closed after ${closedAfter} ms`);
});

/** The node options a running worker was started with (its command line less the script). */
async function workerOptions(t: Test, nodeArgs: readonly string[]): Promise<string[]> {
  const server = await startServerProcess({}, [...nodeArgs, SERVER]);
  try {
    const { pid } = (await (await fetch(`${server.origin}/health`)).json()) as { pid: number };
    t.not(pid, server.child.pid, 'the worker answers /health, not the primary');
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((part) => part.startsWith('--'));
  } finally {
    server.child.kill('SIGKILL');
    await server.exited;
  }
}

// (NODE_OPTIONS is checked in test/app/worker-node-options.test.ts: tap sets its own in every process it starts.)
t.test("the worker's young generation is capped at 16 MiB, unless node's arguments size it", async (t) => {
  t.same(await workerOptions(t, []), ['--max-semi-space-size=16'], 'capped by default');
  t.same(await workerOptions(t, ['--max-semi-space-size=32']), ['--max-semi-space-size=32'], 'the operator decides: the primary’s own option, passed on');
});
