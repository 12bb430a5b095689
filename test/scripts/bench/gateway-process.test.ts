// The benches measure the process that serves: `node dist/server.js` is a cluster primary that serves nothing, so
// the pid a bench reads must be its worker's, and a bench whose measured process served no request must fail.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { requestLogLines } from '../../../scripts/bench/bench-gateway.js';
import { startGatewayProcess } from '../../../scripts/bench/gateway-process.js';

const parentOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(') ') + 2).split(' ')[1]);
};
const env = { LOCAL_LLM_BASE_URL: 'http://127.0.0.1:9/v1', WORKERS: '1' };

t.test('the pid measured is the cluster worker, and stop() fails when it served no request', async (t) => {
  const gateway = await startGatewayProcess(env);
  const primary = parentOf(gateway.pid);
  t.match(readFileSync(`/proc/${primary}/cmdline`, 'utf8'), /server\.js/, 'the measured process is a child of the gateway primary');
  t.not(primary, process.pid, 'not the process node started');
  t.ok(gateway.cpuMicros() >= 0 && gateway.rssBytes() > 0, 'its CPU and RSS are read');
  await t.rejects(gateway.stop(), /pid \d+\) served no request/, 'only /health was asked: the bench fails loudly');
});

t.test('stop() resolves once the measured worker served a request', async (t) => {
  const gateway = await startGatewayProcess(env);
  const answer = await fetch(`${gateway.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  t.equal(answer.status, 400, 'a request the worker answered (and logged)');
  await answer.arrayBuffer();
  await gateway.stop();
});

t.test('requestLogLines counts the lines of the process measured only', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'request-lines-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'gateway.log');
  const line = (pid: number, msg: string) => `{"level":30,"time":"2026-11-28T00:00:00.000Z","pid":${pid},"request_id":"r","msg":"${msg}"}\n`;
  writeFileSync(file, line(100, 'listening') + line(200, 'request') + line(200, 'request') + line(2000, 'request') + line(100, 'request'));
  t.equal(requestLogLines(file), 4, 'every request line');
  t.equal(requestLogLines(file, 200), 2, "the worker's");
  t.equal(requestLogLines(file, 100), 1, "the primary's (none in a real run)");
  t.equal(requestLogLines(file, 20), 0, 'a pid that is a prefix of another is not it');
});
