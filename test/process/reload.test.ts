// SIGHUP to the real primary (dist/server.js, copied so the test can rebuild it): new workers from the dist/ on disk,
// then the old ones retire, with streams and a steady loop of short requests in flight; and a reload whose build
// is broken, which leaves the old workers serving.
import { get } from 'node:http';
import t from 'tap';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';
import { copyBuild } from './reload-build.js';
import { logLinesOf, startServerProcess, streamUnderWay, waitForOutput, type ServerProcess } from './server-process.js';

// Gateways starting and reloading on a loaded 2-core machine can take a while; the test itself takes seconds.
t.setTimeout(120_000);

function roster(models: readonly string[]): string {
  return `version: 1
providers:
  mock:
    base_url: http://127.0.0.1:9/v1
    base_url_env: MOCK_BASE_URL
    api_key_env: MOCK_API_KEY
models:
${[...models].sort().map((model) => `  ${model}:`).join('\n')}
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;
}

const ask = (model: string, stream = false) => JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream });

interface Health {
  status: string;
  routes_sha256: string;
  pid: number;
}

/** GET /health on a new connection: a kept-alive one may still reach a retiring worker, by design. */
async function health(origin: string): Promise<Health> {
  return new Promise((resolve, reject) => {
    get(`${origin}/health`, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (piece: string) => (text += piece));
      res.on('end', () => resolve(JSON.parse(text) as Health));
    }).on('error', reject);
  });
}

/** Resolves with the first log line (parsed) of this `msg` after the `skip` first ones. */
function logLine(server: ServerProcess, msg: string, skip = 0, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  return waitForOutput(server, (output) => logLinesOf(output).filter((line) => line['msg'] === msg)[skip], timeoutMs);
}

/** A provider answering at once, except streams, which send one chunk and wait for release(). */
async function holdingProvider() {
  const held: (() => void)[] = [];
  const provider = await startMockUpstream((request, res) => {
    const body = JSON.parse(request.body) as { model: string; stream?: boolean };
    if (!body.stream) return sendJson(res, 200, completionBody(body.model));
    startEventStream(res);
    res.write(sseBody([chunk(body.model, { role: 'assistant', content: 'Hel' })], { done: false }));
    held.push(() => res.end(sseBody([chunk(body.model, { content: 'lo' }), chunk(body.model, {}, { finish_reason: 'stop' })])));
  });
  return { provider, held, release: () => held.splice(0).forEach((end) => end()) };
}

t.test('a reload with a changed roster under load: every request answered by the old or the new build, the new model served after', async (t) => {
  const build = copyBuild(roster(['mock/steady', 'mock/old-model']));
  t.teardown(() => build.remove());
  const { provider, held, release } = await holdingProvider();
  t.teardown(() => provider.close());
  const server = await startServerProcess(
    // KEEP_ALIVE_TIMEOUT_MS: the old worker exits once its idle keep-alive connections end, well within the test.
    { MOCK_BASE_URL: `${provider.origin}/v1`, MOCK_API_KEY: 'k', SHUTDOWN_GRACE_MS: '30000', KEEP_ALIVE_TIMEOUT_MS: '3000' },
    [build.serverJs],
  );
  t.teardown(() => server.child.kill('SIGKILL'));
  const before = await health(server.origin);
  t.not(before.pid, server.child.pid, 'a worker answers, not the primary (WORKERS=1 runs a primary too)');

  // Three streams on the old worker, held by the provider until the reload is done.
  const streams = await Promise.all([1, 2, 3].map(() => streamUnderWay(server.origin, ask('mock/steady', true))));
  t.equal(held.length, 3);

  // Four loops of short requests on keep-alive connections, one on a new connection each time.
  let running = true;
  const results: { status: number | string; model?: string }[] = [];
  const loop = async (headers: Record<string, string>) => {
    while (running) {
      try {
        const response = await fetch(`${server.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: ask('mock/steady') });
        const body = (await response.json()) as { model?: string };
        results.push({ status: response.status, ...(body.model ? { model: body.model } : {}) });
      } catch (error) {
        results.push({ status: `failed: ${String((error as Error).cause ?? error)}` });
      }
    }
  };
  const loops = [loop({}), loop({}), loop({}), loop({ connection: 'close' })];
  await waitForOutput(server, () => (results.length >= 40 ? true : undefined));

  const newSha = build.writeRoutes(roster(['mock/steady', 'mock/new-model']));
  const sentAt = results.length;
  server.child.kill('SIGHUP');
  const reloaded = await logLine(server, 'reloaded: new workers serve, the old ones finish what they serve');
  const [newPid] = reloaded['workers'] as number[];
  t.match(reloaded, { retiring: [before.pid], routes_sha256: newSha, previous_routes_sha256: before.routes_sha256 });
  // Keep the loops going until the new worker has answered plenty of them.
  const afterReload = results.length;
  await waitForOutput(server, () => (results.length >= afterReload + 60 ? true : undefined));

  release();
  const texts = await Promise.all(streams.map((stream) => stream.rest()));
  running = false;
  await Promise.all(loops);
  for (const text of texts) t.match(text, /"content":"Hel"[\s\S]*"content":"lo"[\s\S]*data: \[DONE\]\n\n$/, 'a stream begun before the reload finished whole');

  const failed = results.filter((result) => result.status !== 200);
  t.same(failed, [], 'no request failed');
  t.ok(results.every((result) => result.model === 'mock/steady'));

  // The old worker exits once its connections are done; the port stays open for the new one.
  const retired = await logLine(server, 'worker retired');
  t.match(retired, { worker_pid: before.pid, code: 0 });
  const after = await health(server.origin);
  t.match(after, { status: 'ok', routes_sha256: newSha, pid: newPid });
  const newModel = await fetch(`${server.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ask('mock/new-model') });
  t.equal(newModel.status, 200, 'the new roster is served');
  t.match(await newModel.json(), { model: 'mock/new-model' });
  const oldModel = await fetch(`${server.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ask('mock/old-model') });
  t.equal(oldModel.status, 400, 'the model the new roster removed is gone');
  t.match(await oldModel.json(), { error: { gateway_code: 'unknown_model' } });

  // Which worker answered what, from the request lines (written after each answer, in batches).
  const total = results.length + streams.length;
  const chats = () => logLinesOf(server.output()).filter((line) => line['msg'] === 'request' && line['path'] === '/v1/chat/completions' && line['model'] === 'mock/steady');
  await waitForOutput(server, () => (chats().length >= total ? true : undefined));
  const byPid = new Map<unknown, number>();
  for (const line of chats()) byPid.set(line['pid'], (byPid.get(line['pid']) ?? 0) + 1);
  t.same([...byPid.keys()].sort(), [before.pid, newPid].sort(), 'answered by the old and the new worker only');
  t.ok((byPid.get(newPid) ?? 0) >= 40, 'the new worker took the traffic');
  t.comment(
    `figures: ${results.length} short requests (${sentAt} before SIGHUP, ${afterReload - sentAt} during the reload, ${results.length - afterReload} after), ` +
      `up to 4 in flight; ${streams.length} streams in flight across the reload; answered by the old worker ${byPid.get(before.pid)}, the new ${byPid.get(newPid)}; ` +
      `failures ${failed.length}; reload took ${String(reloaded['took_ms'])} ms`,
  );
});

t.test('a reload with a broken build leaves the old worker serving, says why in one line, and the next SIGHUP can succeed', async (t) => {
  const build = copyBuild(roster(['mock/steady']));
  t.teardown(() => build.remove());
  const { provider } = await holdingProvider();
  t.teardown(() => provider.close());
  const server = await startServerProcess({ MOCK_BASE_URL: `${provider.origin}/v1`, MOCK_API_KEY: 'k', RELOAD_TIMEOUT_MS: '8000' }, [build.serverJs]);
  t.teardown(() => server.child.kill('SIGKILL'));
  const before = await health(server.origin);

  let running = true;
  const statuses: (number | string)[] = [];
  const loop = (async () => {
    while (running) {
      const answer = await fetch(`${server.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ask('mock/steady') }).catch((error: unknown) => error);
      statuses.push(answer instanceof Response ? answer.status : `failed: ${String(answer)}`);
      if (answer instanceof Response) await answer.text();
    }
  })();

  const failures: [string, () => void, RegExp][] = [
    ['a syntax error in the routes table', () => build.breakRoutesSyntax(), /^worker \d+ exited \(code 1\) before it was ready: cannot load the build: dist\/generated\/routes\.js: SyntaxError: Unexpected end of input$/],
    ['a missing file', () => (build.writeRoutes(roster(['mock/new-model', 'mock/steady'])), build.removeApp()), /^worker \d+ exited \(code 1\) before it was ready: cannot load the build: dist\/app\.js \(or a file it imports\): Error: Cannot find module '.*dist\/app\.js'/],
    ['a worker that never gets ready', () => (build.restoreApp(), build.hangApp()), /^new workers \d+ not ready within 8000 ms \(RELOAD_TIMEOUT_MS\)$/],
    ['a worker that exits at boot without a word', () => (build.restoreApp(), build.exitAtLoad(3)), /^worker \d+ exited \(code 3\) before it was ready: it gave no reason/],
  ];
  for (const [index, [what, breakIt, reason]] of failures.entries()) {
    breakIt();
    server.child.kill('SIGHUP');
    const failed = await logLine(server, 'reload failed; the old workers keep serving', index);
    t.match(failed, { level: 50, reason, routes_sha256: before.routes_sha256, workers: [before.pid] }, `${what}: one error line with the reason`);
    t.match(await health(server.origin), { status: 'ok', pid: before.pid, routes_sha256: before.routes_sha256 }, `${what}: the old worker serves`);
  }

  // Mended: two SIGHUPs in a row, the second queued behind the first.
  const newSha = build.writeRoutes(roster(['mock/new-model', 'mock/steady']));
  server.child.kill('SIGHUP');
  await logLine(server, 'reloading: starting new workers from dist/', failures.length);
  server.child.kill('SIGHUP');
  await logLine(server, 'SIGHUP: reload queued, it starts when the one under way ends');
  const first = await logLine(server, 'reloaded: new workers serve, the old ones finish what they serve');
  const second = await logLine(server, 'reloaded: new workers serve, the old ones finish what they serve', 1);
  t.match(first, { retiring: [before.pid], routes_sha256: newSha });
  t.match(second, { retiring: first['workers'], routes_sha256: newSha });
  t.match(await health(server.origin), { status: 'ok', pid: (second['workers'] as number[])[0], routes_sha256: newSha });
  running = false;
  await loop;
  t.ok(statuses.length > 0);
  t.same(statuses.filter((status) => status !== 200), [], `all ${statuses.length} requests sent meanwhile were answered 200`);
  t.equal(logLinesOf(server.output()).filter((line) => line['msg'] === 'reload failed; the old workers keep serving').length, failures.length, 'one line per failed reload');
});
