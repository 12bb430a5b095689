// The gateway as `npm run bench` measures it: the built dist/, run as ops run it (`node server.js`, default
// configuration: request log at info on a pipe this process drains, metrics on), but with the bench's own
// routing table (bench-routes.yaml: two endpoints per provider, an anthropic-dialect provider), so that
// failover bookkeeping is paid for and the Anthropic translation can be measured. The shipped routes.yaml and
// src/generated/ are not touched: dist/ is copied into this run's temporary folder and its generated/routes.js
// replaced by the bench table, compiled by the project's own compiler (as `npm run build` compiles routes.yaml).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileRoutes } from '../routes/compile-routes.js';
import { formatProblem } from '../routes/problem.js';
import { announcedOrigin, bareEnv, track, whenReady } from './children.js';
import { REPO } from './report.js';
import { fatal, runDir, type Target } from './targets.js';

const BENCH_ROUTES = fileURLToPath(new URL('./bench-routes.yaml', import.meta.url));
/** A made-up key for the anthropic-dialect provider: the mock checks nothing, and nothing real is ever sent. */
const FAKE_ANTHROPIC_KEY = 'bench-not-a-real-key';

export interface Gateway extends Target {
  readonly origin: string;
  logLines(): number;
  stop(): Promise<void>;
}

/** dist/ copied with the bench routing table in place of the shipped one; returns the copy's server.js. */
function benchDist(): string {
  const compiled = compileRoutes(readFileSync(BENCH_ROUTES, 'utf8'));
  if (!compiled.ok) throw new Error(`bench-routes.yaml does not compile:\n${compiled.problems.map((p) => formatProblem('bench-routes.yaml', p)).join('\n')}`);
  const dist = join(runDir(), 'dist');
  cpSync(join(REPO, 'dist'), dist, { recursive: true, filter: (source) => !source.endsWith('.map') });
  // Inside node_modules no package.json above says ESM: say it here.
  writeFileSync(join(runDir(), 'package.json'), '{"type":"module"}\n');
  const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
  // The same two exports scripts/emit/emit-routes.ts generates (there as TypeScript, here as what tsc makes of it).
  writeFileSync(
    join(dist, 'generated', 'routes.js'),
    `// bench-routes.yaml (sha256 ${compiled.tables.sourceSha256}), written by scripts/bench/bench-gateway.ts.\n` +
      `export const GATEWAY_VERSION = ${JSON.stringify(version)};\n` +
      `export const routeTables = ${JSON.stringify(compiled.tables, null, 2)};\n`,
  );
  return join(dist, 'server.js');
}

let server: string | undefined;

/** Starts the gateway with both endpoints of every bench provider on the mock provider at `mockPort`; `nodeArgs` go to node. */
export async function startGateway(mockPort: number, nodeArgs: readonly string[] = []): Promise<Gateway> {
  server ??= benchDist();
  const mock = `http://127.0.0.1:${mockPort}/v1`;
  const child = track(
    spawn(process.execPath, [...nodeArgs, server], {
      cwd: REPO,
      env: bareEnv({ BENCH_ENDPOINT_A_URL: mock, BENCH_ENDPOINT_B_URL: mock, BENCH_ANTHROPIC_KEY: FAKE_ANTHROPIC_KEY, PORT: '0', HOST: '127.0.0.1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let lines = 0;
  let stderrTail = '';
  let stopping = false;
  child.stderr!.on('data', (piece: Buffer) => (stderrTail = (stderrTail + piece.toString()).slice(-4000)));
  // The log is drained as ops would ship it: read and counted, never kept.
  child.stdout!.on('data', (piece: Buffer) => {
    for (let at = piece.indexOf(10); at !== -1; at = piece.indexOf(10, at + 1)) lines++;
  });
  const origin = await whenReady(child, 'the gateway', announcedOrigin(child.stdout!), 30_000, () => `:\n${stderrTail}`);
  child.once('exit', (code, signal) => {
    if (!stopping) fatal(new Error(`the gateway exited during the bench (${String(signal ?? code)}):\n${stderrTail}`));
  });
  return {
    name: 'gateway',
    origin,
    url: `${origin}/v1/chat/completions`,
    pid: child.pid!,
    logLines: () => lines,
    async stop() {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The requests /metrics counted in gateway_requests_total (all labels). */
export async function countedRequests(gateway: Gateway): Promise<number> {
  const text = await (await fetch(`${gateway.origin}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('gateway_requests_total{'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}
