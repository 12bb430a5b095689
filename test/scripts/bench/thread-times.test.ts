// bench:streams' reading of where a worker's threads spent their time (scripts/bench/thread-times.ts), on a real
// child process: 300 ms of CPU spun on its main thread are read as the main thread's, not its other threads'.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import t from 'tap';
import { threadTimes, threadTimesBetween } from '../../../scripts/bench/thread-times.js';

const BUSY = `
const until = process.cpuUsage().user + 300_000;
while (process.cpuUsage().user < until);
process.stdout.write('busy done\\n');
process.stdin.resume();
`;

t.test("a busy main thread's CPU time is read as the main thread's", async (t) => {
  const child = spawn(process.execPath, ['-e', 'process.stdout.write("ready\\n"); process.stdin.once("data", () => {' + BUSY + '});'], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.teardown(() => void child.kill('SIGKILL'));
  const lines = child.stdout.setEncoding('utf8');
  await once(lines, 'data');
  const before = threadTimes(child.pid!);
  t.ok(before, 'this machine has schedstat (CI and the bench machines do)');
  child.stdin.write('go\n');
  let seen = '';
  while (!seen.includes('busy done')) seen += String((await once(lines, 'data'))[0]);
  const spent = threadTimesBetween(before!, threadTimes(child.pid!)!);
  t.ok(spent.mainRunMs >= 250, `the main thread ran ${spent.mainRunMs.toFixed(0)} ms of the 300 it spun`);
  t.ok(spent.v8RunMs + spent.otherRunMs < spent.mainRunMs / 2, `the other threads ran ${(spent.v8RunMs + spent.otherRunMs).toFixed(0)} ms`);
  t.ok(spent.mainWaitMs >= 0);
});

t.test('a process that is gone reads as null', async (t) => {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(child, 'exit');
  t.equal(threadTimes(child.pid!), null);
});
