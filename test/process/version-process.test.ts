// The release a running gateway is: package.json's version, in /health and in the `listening` log line, so an
// operator can tell which build answers (docs/upgrading.md).
import { readFileSync } from 'node:fs';
import t from 'tap';
import { logLinesOf, startServerProcess, waitForOutput } from './server-process.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

t.test("/health and the listening line carry package.json's version", async (t) => {
  t.match(version, /^\d+\.\d+\.\d+(-[\w.]+)?$/, 'a semantic version');
  const server = await startServerProcess({ LOG_FORMAT: 'json' });
  t.teardown(() => server.child.kill('SIGKILL'));
  const health = (await (await fetch(`${server.origin}/health`)).json()) as Record<string, unknown>;
  t.equal(health['version'], version);
  const listening = await waitForOutput(server, (output) => logLinesOf(output).find((line) => line['msg'] === 'listening'));
  t.equal(listening['version'], version);
  t.match(server.output(), new RegExp(`^chat-routing-gateway ${version.replace(/\./g, '\\.')} listening on http://`, 'm'));
});
