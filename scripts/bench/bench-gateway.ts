// The gateway as `npm run bench` measures it: the built dist/, run as ops run it (`node server.js`, default
// configuration, issue 40's budget): the request log at info as JSON lines to a FILE (stdout redirected to it, as
// a container runtime or systemd does; never a pipe this process drains), metrics on, tracing off, and one caller
// with limits counted in memory, whose key every load generator sends. The routing table is the bench's own
// (bench-routes.yaml: two endpoints per provider, a one-endpoint provider, an anthropic-dialect provider, prices),
// so failover bookkeeping and callers' admission are paid for and the Anthropic translation can be measured. The
// shipped routes.yaml and src/generated/ are not touched: dist/ is copied into this run's temporary folder and its
// generated/routes.js replaced by the bench table, compiled by the project's own compiler (as `npm run build` does).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, cpSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileRoutes } from '../routes/compile-routes.js';
import { formatProblem } from '../routes/problem.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH_CALLER_KEY, BENCH_OPEN_CALLER_KEY } from './bench-protocol.js';
import { bareEnv, track, whenReady } from './children.js';
import { REPO } from './report.js';
import { fatal, runDir, type Target } from './targets.js';

const BENCH_ROUTES = fileURLToPath(new URL('./bench-routes.yaml', import.meta.url));
/** A made-up key for the anthropic-dialect provider: the mock checks nothing, and nothing real is ever sent. */
const FAKE_ANTHROPIC_KEY = 'bench-not-a-real-key';

export interface Gateway extends Target {
  readonly origin: string;
  /** The cluster primary node started: it serves nothing (with WORKERS>1, or during a reload, it counts limited callers over IPC). */
  readonly primaryPid: number;
  /** The request log's lines so far (`"msg":"request"`) written by the process measured (`pid`, the worker), counted in its file. */
  logLines(): number;
  /** What the gateway printed to stderr first (up to 100 kB): with `--inspect`, its processes' inspector URLs. */
  stderrHead(): string;
  stop(): Promise<void>;
}

/** The environment the bench gateway runs with: every bench endpoint on the mock provider at `mockPort`, the caller's key. */
export function benchGatewayEnv(mockPort: number): Record<string, string> {
  const mock = `http://127.0.0.1:${mockPort}/v1`;
  return { BENCH_ENDPOINT_A_URL: mock, BENCH_ENDPOINT_B_URL: mock, BENCH_ANTHROPIC_KEY: FAKE_ANTHROPIC_KEY, BENCH_CALLER_KEYS: BENCH_CALLER_KEY, BENCH_OPEN_CALLER_KEYS: BENCH_OPEN_CALLER_KEY };
}

/** Opens `file` for the gateway's stdout: its log goes there, as ops ship it (a file, not a pipe). */
export function openLogFile(file: string): number {
  return openSync(file, 'w');
}

/**
 * The origin the gateway announces on its stdout (`listening on http://…`), read from its log file as it grows;
 * `child` exiting first, or nothing within `timeoutMs`, is an error with `detail()`.
 */
export function originFromLogFile(child: ChildProcess, file: string, what: string, timeoutMs: number, detail: () => string): Promise<string> {
  const announced = (async () => {
    for (;;) {
      const match = existsSync(file) ? /listening on (http:\/\/\S+)/.exec(readFileSync(file, 'utf8')) : null;
      if (match) return match[1]!;
      await sleep(50);
    }
  })();
  return whenReady(child, what, announced, timeoutMs, detail);
}

/**
 * The request log lines in `file` (one per answered request), so a run can check the file got every one; with `pid`,
 * only the lines that process wrote (every line carries its writer's pid): a check that the process measured served.
 */
export function requestLogLines(file: string, pid?: number): number {
  const text = readFileSync(file, 'latin1');
  const writer = `"pid":${pid},`;
  let lines = 0;
  for (let at = text.indexOf('"msg":"request"'); at !== -1; at = text.indexOf('"msg":"request"', at + 15)) {
    if (pid === undefined || text.slice(text.lastIndexOf('\n', at) + 1, at).includes(writer)) lines++;
  }
  return lines;
}

/**
 * dist/ copied with the bench routing table in place of the shipped one; returns the copy's server.js. Without
 * `callers` the table declares none (`npm run bench:instructions -- --pieces` measures what callers cost); `source`
 * is another build's dist/ (`--against`).
 */
export function benchDist({ callers = true, source = join(REPO, 'dist'), name = callers ? 'dist' : 'dist-no-callers' }: { callers?: boolean; source?: string; name?: string } = {}): string {
  const yaml = readFileSync(BENCH_ROUTES, 'utf8');
  const compiled = compileRoutes(callers ? yaml : withoutCallers(yaml));
  if (!compiled.ok) throw new Error(`bench-routes.yaml does not compile:\n${compiled.problems.map((p) => formatProblem('bench-routes.yaml', p)).join('\n')}`);
  const dist = join(runDir(), name);
  cpSync(source, dist, { recursive: true, filter: (source) => !source.endsWith('.map') });
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

/** bench-routes.yaml without its top-level `callers:` section. */
function withoutCallers(yaml: string): string {
  const section = /^callers:\n(?:[ #].*\n|\n)*/m;
  if (!section.test(yaml)) throw new Error('bench-routes.yaml has no callers: section to leave out');
  return yaml.replace(section, '');
}

let server: string | undefined;

let launches = 0;

/**
 * Starts the gateway with every endpoint of every bench provider on the mock provider at `mockPort`; `nodeArgs` go
 * to node; `source`: another build's dist/ (the first call's is used for the whole run); `env`: more of its
 * environment (bench:tracing-cpu's OTEL_EXPORTER_OTLP_ENDPOINT).
 */
export async function startGateway(mockPort: number, nodeArgs: readonly string[] = [], source?: string, env: Record<string, string> = {}): Promise<Gateway> {
  server ??= benchDist(source ? { source } : {});
  const logFile = join(runDir(), `gateway-${++launches}.log`);
  const stdout = openLogFile(logFile);
  const child = track(
    spawn(process.execPath, [...nodeArgs, server], {
      cwd: REPO,
      env: bareEnv({ ...benchGatewayEnv(mockPort), PORT: '0', HOST: '127.0.0.1', ...env }),
      stdio: ['ignore', stdout, 'pipe'],
    }),
  );
  closeSync(stdout); // the child has its own descriptor
  let stderrTail = '';
  let stderrHead = '';
  let stopping = false;
  child.stderr!.on('data', (piece: Buffer) => {
    stderrTail = (stderrTail + piece.toString()).slice(-4000);
    if (stderrHead.length < 100_000) stderrHead += piece.toString();
  });
  const origin = await originFromLogFile(child, logFile, 'the gateway', 30_000, () => `:\n${stderrTail}`);
  // The process that serves is the cluster worker, not the primary that node started: /health names it.
  const { pid } = (await (await fetch(`${origin}/health`)).json()) as { pid: number };
  child.once('exit', (code, signal) => {
    if (!stopping) fatal(new Error(`the gateway exited during the bench (${String(signal ?? code)}):\n${stderrTail}`));
  });
  return {
    name: 'gateway',
    origin,
    url: `${origin}/v1/chat/completions`,
    pid,
    primaryPid: child.pid!,
    logLines: () => requestLogLines(logFile, pid),
    stderrHead: () => stderrHead,
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
