// `npm run key -- NAME`: a key and the line to paste; pasted as printed, the key is that caller's.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { HI, bearer, callersRoutes, startUsageMock } from '../helpers/callers-routes.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

function key(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/key.ts', ...args], { cwd: repoRoot, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
  });
}

t.test('prints a prefixed random key and the sha256 line that makes it the caller\'s', async (t) => {
  const first = await key('search-team');
  t.equal(first.code, 0);
  const printedKey = /^ {2}(crg_[A-Za-z0-9_-]{43})$/m.exec(first.stdout)?.[1];
  const line = /^ {6}(- sha256:[0-9a-f]{64})$/m.exec(first.stdout)?.[1];
  t.ok(printedKey, 'a crg_ key of 32 random bytes');
  t.ok(line, 'a line to paste under keys');
  t.match(first.stdout, /secret store/);
  const second = await key('search-team');
  t.not(/crg_\S+/.exec(second.stdout)?.[0], printedKey, 'a new key each time');

  const mock = await startUsageMock();
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes: callersRoutes(`  search-team:\n    keys:\n${' '.repeat(6)}${line}`), upstreamOrigin: mock.upstream.origin });
  t.teardown(() => gateway.close());
  t.equal((await gateway.post({ model: 'mock/big', messages: HI }, bearer(printedKey!))).status, 200);
  t.equal(gateway.requestLogs()[0]!['caller'], 'search-team');
});

t.test('refuses a name that cannot be a caller', async (t) => {
  const result = await key('Search Team');
  t.equal(result.code, 2);
  t.match(result.stderr, /usage: npm run key -- NAME/);
  t.equal(result.stdout, '');
});
