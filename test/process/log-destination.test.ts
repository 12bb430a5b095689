import { fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import t from 'tap';
import { infoLineWriter } from '../../src/observe/info-line.js';
import { batchedLogOutput } from '../../src/observe/log-destination.js';
import { startMockUpstream, sendJson } from '../helpers/mock-upstream.js';
import { logLinesOf, startServerProcess, waitForOutput } from './server-process.js';

t.test('a stalled stdout costs bounded memory: past the buffer, whole lines are dropped and counted', async (t) => {
  const LINES = 2000;
  const child = fork(new URL('./stalled-log-writer.ts', import.meta.url), {
    env: { ...process.env, LINES: String(LINES), MAX_BYTES: String(256 * 1024) },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  t.teardown(() => void child.kill('SIGKILL'));
  // The parent reads nothing until the child has written every line: the pipe (64 KiB) fills, then the buffer.
  child.stdout!.pause();
  const [report] = (await once(child, 'message')) as [{ dropped: number }];
  t.ok(report.dropped > 0, `${report.dropped} lines dropped once 256 KiB were waiting`);
  t.ok(report.dropped < LINES, 'the lines that fit were kept');
  let text = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (piece: string) => (text += piece));
  child.stdout!.resume();
  const exited = once(child, 'exit');
  // Let the pipe drain before asking the child to exit (its exit hook writes what is still waiting).
  await new Promise((resolve) => setTimeout(resolve, 500));
  child.send('exit');
  await exited;
  const lines = text.split('\n').filter(Boolean);
  t.equal(lines.length + report.dropped, LINES, 'every line was either written whole or counted as dropped');
  t.ok(lines.every((line) => (JSON.parse(line) as { msg: string }).msg === 'request'), 'no line was cut');
});

t.test('lines to a file: written whole in batches, and the ones still waiting at exit are written too', async (t) => {
  const LINES = 10; // about 1 KiB each: two 4 KiB batches while writing, two lines still waiting at the end
  const dir = mkdtempSync(join(tmpdir(), 'gateway-log-file-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'out.log');
  const fd = openSync(file, 'w');
  const child = fork(new URL('./stalled-log-writer.ts', import.meta.url), {
    env: { ...process.env, LINES: String(LINES) },
    stdio: ['ignore', fd, 'inherit', 'ipc'],
  });
  closeSync(fd);
  t.teardown(() => void child.kill('SIGKILL'));
  const [report] = (await once(child, 'message')) as [{ dropped: number }];
  t.equal(report.dropped, 0, 'nothing dropped');
  const exited = once(child, 'exit');
  child.send('exit'); // at once: well before the periodic flush
  await exited;
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  t.equal(lines.length, LINES, 'every line is in the file');
  t.same(lines.map((line) => (JSON.parse(line) as { i: number }).i), [...Array(LINES).keys()], 'whole and in order');
});

t.test('logger.flush(cb) writes what waits in the batch before calling back', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-log-flush-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'out.log');
  const fd = openSync(file, 'w');
  t.teardown(() => closeSync(fd));
  const logger = pino({ base: null }, batchedLogOutput(fd).stream);
  for (let i = 0; i < 3; i++) logger.info({ i }, 'request'); // far below a 4 KiB batch: all three wait
  t.equal(readFileSync(file, 'utf8'), '', 'nothing written before the flush');
  await new Promise<void>((resolve, reject) => logger.flush((error) => (error ? reject(error) : resolve())));
  t.same(readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { i: number }).i), [0, 1, 2]);
});

t.test('a request line waits in the batch; a warning, an error or a lifecycle line is written at once, after the lines waiting', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-log-at-once-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'out.log');
  const fd = openSync(file, 'w'); // a regular file: written synchronously, so what is written is in the file at once
  t.teardown(() => closeSync(fd));
  const logger = pino({ base: null }, batchedLogOutput(fd).stream);
  const written = () => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { msg: string; i?: number });
  logger.info({ i: 0 }, 'request');
  t.same(written(), [], 'a request line waits');
  logger.warn({ i: 1 }, 'limit store down');
  t.same(written().map((line) => [line.msg, line.i]), [['request', 0], ['limit store down', 1]], 'a warning goes at once, after the request line that waited');
  logger.info({ i: 2 }, 'request');
  t.equal(written().length, 2, 'the next request line waits again');
  logger.info({ i: 3 }, 'draining');
  t.same(written().map((line) => line.i), [0, 1, 2, 3], 'an info lifecycle line goes at once');
  logger.error({ i: 4 }, 'uncaught');
  t.same(written().map((line) => line.i), [0, 1, 2, 3, 4], 'an error goes at once');
  // A field holding the words a request line ends with is escaped in the line: a lifecycle line stays one.
  logger.info({ i: 5, path: ',"msg":"request"}' }, 'listening');
  t.equal(written().length, 6, 'a lifecycle line quoting the words goes at once');
  // The request log's own writer hands its lines over as request lines (writeWaiting): they wait the same way.
  const writeRequestLine = infoLineWriter(logger, 'request', { mayWait: true });
  writeRequestLine('"i":6');
  t.equal(written().length, 6, "the request log's line waits");
  logger.warn({ i: 7 }, 'limit store down');
  t.same(written().map((line) => [line.msg, line.i]).slice(6), [['request', 6], ['limit store down', 7]], 'and goes out before the warning, whole');
});

for (const [level, msg] of [['warn', 'limit store down'], ['info', 'listening'], ['error', 'uncaught exception']] as const) {
  t.test(`a process's ${level} line "${msg}" reaches stdout with no request lines after it and no timer able to run`, async (t) => {
    // No IPC channel: the child is killed while blocked, and only its stdout is read.
    const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(new URL('./blocked-log-writer.ts', import.meta.url))], {
      env: { ...process.env, LINE_LEVEL: level, LINE_MSG: msg },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    t.teardown(() => void child.kill('SIGKILL'));
    child.stdout!.on('error', () => {}); // the killed child's end of the socket may reset: what was read is what counts
    let text = '';
    child.stdout!.setEncoding('utf8');
    // The child's event loop is blocked once it has logged: only a line written when logged can arrive (a generous bound for a loaded machine).
    const arrived = await new Promise<boolean>((resolve) => {
      const bound = setTimeout(() => resolve(false), 30_000);
      child.stdout!.on('data', (piece: string) => {
        text += piece;
        if (text.includes(`"msg":${JSON.stringify(msg)}`)) {
          clearTimeout(bound);
          resolve(true);
        }
      });
    });
    t.ok(arrived, `the ${level} line arrived while the child's loop was blocked`);
    const lines = text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { msg: string });
    t.same(lines.map((line) => line.msg), ['request', msg], 'the request line that waited went with it, first');
  });
}

t.test('a file that refuses writes costs the lines of each failed batch, counted once, and never the process', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-log-refused-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'out.log');
  writeFileSync(file, '');
  const fd = openSync(file, 'r'); // a regular file, so written synchronously; every write fails (EBADF)
  t.teardown(() => closeSync(fd));
  const output = batchedLogOutput(fd);
  const logger = pino({ base: null }, output.stream);
  const filler = 'x'.repeat(1000);
  for (let i = 0; i < 9; i++) logger.info({ i, filler }, 'request'); // two 4 KiB batches of four lines fail, one line waits
  t.equal(output.dropped(), 8, 'the two failed batches, four lines each');
  t.equal(readFileSync(file, 'utf8'), '', 'nothing written');
});

t.test('a quiet gateway’s request line reaches stdout within about a second, and /metrics counts dropped lines', async (t) => {
  const upstream = await startMockUpstream((_req, res) =>
    sendJson(res, 200, { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4.1-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }),
  );
  const server = await startServerProcess({ OPENAI_API_KEY: 'sk-test', GATEWAY_OPENAI_BASE_URL: `${upstream.origin}/v1`, LOG_FORMAT: 'json' });
  t.teardown(async () => {
    server.child.kill('SIGKILL');
    await upstream.close();
  });
  const answer = await fetch(`${server.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(answer.status, 200);
  await answer.text();
  // One short line is far below the 4 KiB batch: only the periodic flush writes it (generous wait for a loaded machine).
  const line = await waitForOutput(server, (output) => logLinesOf(output).find((each) => each['msg'] === 'request' && each['path'] === '/v1/chat/completions'), 15_000);
  t.equal(line['status'], 200);
  const metrics = await (await fetch(`${server.origin}/metrics`)).text();
  t.match(metrics, /^gateway_log_lines_dropped_total 0$/m);
});

t.test('the lines written while draining reach stdout before the process exits', async (t) => {
  const server = await startServerProcess({ LOG_FORMAT: 'json' });
  t.teardown(() => void server.child.kill('SIGKILL'));
  server.child.kill('SIGTERM');
  t.equal(await server.exited, 0);
  const messages = logLinesOf(server.output()).map((line) => line['msg']);
  t.ok(messages.includes('draining') && messages.includes('stopped'), 'draining and stopped both written');
});
