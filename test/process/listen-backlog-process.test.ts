// The listen backlog (issue 40, line 5): Node's own 511 overflowed while 10,000 streams opened at 250 a second with
// the worker's event loop busy, and the callers got ECONNRESET. The gateway listens with the kernel's limit
// (net.core.somaxconn), or LISTEN_BACKLOG; the backlog is read back from the kernel (`ss`: a listening socket's
// Send-Q is its backlog) for the socket the cluster's workers accept from, with either scheduling policy.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import { runServerExpectingExit, startServerProcess } from './server-process.js';

const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'latin1').trim());

/** The backlog of the socket listening on `port` of 127.0.0.1, as the kernel reports it. */
function backlogOf(port: string): number {
  const line = execFileSync('ss', ['-Hltn', `sport = :${port}`], { encoding: 'latin1' }).trim();
  const [state, , sendQ] = line.split(/\s+/);
  if (state !== 'LISTEN' || line.includes('\n')) throw new Error(`expected one listening socket on port ${port}, ss says: ${line}`);
  return Number(sendQ);
}

async function listeningBacklog(t: Test, env: Record<string, string>): Promise<number> {
  const server = await startServerProcess(env);
  t.teardown(() => server.child.kill('SIGKILL'));
  t.equal((await fetch(`${server.origin}/health`)).status, 200, 'the worker answers');
  return backlogOf(new URL(server.origin).port);
}

t.test('the gateway listens with the kernel limit, net.core.somaxconn, not Node’s 511', async (t) => {
  // On main this read 511 wherever somaxconn is above it (4096 since Linux 5.4).
  t.equal(await listeningBacklog(t, {}), somaxconn, 'WORKERS=1 (the worker accepts from the shared socket)');
  t.equal(await listeningBacklog(t, { WORKERS: '2' }), somaxconn, 'WORKERS=2 (the primary accepts, round-robin)');
});

t.test('LISTEN_BACKLOG sets it; a bad value refuses to start with one line', async (t) => {
  t.equal(await listeningBacklog(t, { LISTEN_BACKLOG: '100' }), 100);
  const { code, output } = await runServerExpectingExit({ LISTEN_BACKLOG: 'lots' });
  t.equal(code, 1);
  t.match(output.trim(), /^chat-routing-gateway: LISTEN_BACKLOG must be an integer from 1 to 2147483647, got "lots"$/);
});
