// A bench target under callgrind for `npm run bench:instructions`: started as `node <script>` under valgrind with
// instrumentation off (its start and warm-up run several times faster, uncounted), counted in windows of checked
// requests with nothing forced in between (no collection asked for: see instructions.ts), and driven.
// The orchestration and the reports stay in instructions.ts.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openLogFile, originFromLogFile, requestLogLines } from './bench-gateway.js';
import { CALLER_HEADERS } from './bench-protocol.js';
import { bareEnv, onStop, portMessage, track, whenReady } from './children.js';
import { REPO } from './report.js';

/** valgrind names its control pipes after $HOST: the targets and callgrind_control must agree on it. */
export const HOST = '127.0.0.1';
export const CONNECTIONS = 8;

export interface Scenario {
  readonly label: string;
  readonly streamed: boolean;
  readonly body: string;
}

/** Where a run keeps its dumps, and whether its targets write perf maps (--parts). */
export interface CountedRun {
  readonly workDir: string;
  readonly perfMaps: boolean;
  /** node flags every target starts with, before the bench's own (instructions.ts: STEADY_HEAP_FLAGS). */
  readonly nodeFlags: readonly string[];
}

export function fail(message: string): never {
  process.stderr.write(`bench:instructions: FAILED: ${message}\n`);
  process.exit(1);
}

/** Every child gets the same $HOST, so that callgrind_control finds the targets' control pipes. */
export const targetEnv = (extra: Record<string, string>) => bareEnv({ HOST, ...extra });

/** valgrind starts node slowly (minutes on a loaded 2-core machine): a target has 600 s to be ready. */
export const readyWithin600s = <T>(child: ChildProcess, what: string, ready: Promise<T>) =>
  whenReady(child, what, ready, 600_000).catch((error: Error) => fail(error.message));

/** A process of a target whose instructions are counted; the first of a target's is the one that serves. */
export interface CountedProcess {
  /** What it is: `proxy`, or for the gateway `worker (serves)` and `primary`. */
  readonly role: string;
  readonly pid: number;
}

export interface CountedTarget {
  readonly name: string;
  readonly url: string;
  /** The model every answer must carry. */
  readonly model: string;
  /** The process that serves first; a gateway's cluster primary after it (whatever per-request work it does: limited callers' counts with WORKERS>1). */
  readonly processes: readonly CountedProcess[];
  /** Request log lines written by the serving process so far (its log file, by pid); null for a proxy. */
  logLines(): number | null;
  /** Zeroes the counters, runs `work`, dumps: the instructions `work` cost each of `processes`, in that order. */
  count(work: () => Promise<void>): Promise<number[]>;
  /** The serving process's last count's callgrind dump, and its perf map. */
  readonly files: { work: string; perfMap: string };
}

/**
 * Starts `node <script>` under callgrind; the script reports its port over IPC, or (the gateway, `log`) prints
 * `listening on <url>` to its stdout, which is a file there: its request log, as ops run it. The gateway's
 * `node dist/server.js` is a cluster primary that serves nothing and forks the worker that serves (issue 36):
 * valgrind follows the fork (--trace-children=yes), and the worker, found by the pid its /health answers with, is
 * the process counted; the primary is counted beside it, so any per-request work done there shows.
 */
export async function startCounted(run: CountedRun, name: string, script: string, extraEnv: Record<string, string>, model: string, ready: 'ipc' | 'log'): Promise<CountedTarget> {
  const outFile = join(run.workDir, `${name.replace(/\W+/g, '-')}.%p`);
  const logFile = join(run.workDir, `${name.replace(/\W+/g, '-')}.log`);
  const stdout = ready === 'log' ? openLogFile(logFile) : 'pipe';
  // --parts names JIT code by the perf map, and code still interpreted by a copy of the interpreter's entry per
  // function; V8's log, which --perf-basic-prof also writes, goes to the work folder.
  const perfArgs = run.perfMaps ? ['--interpreted-frames-native-stack', '--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${outFile.replace('%p', 'v8.log')}`] : [];
  // A cluster worker inherits node's flags and, traced, valgrind's.
  const traceChildren = ready === 'log' ? ['--trace-children=yes'] : [];
  const child = track(
    spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', ...traceChildren, `--callgrind-out-file=${outFile}`, '--dump-instr=no', process.execPath, ...run.nodeFlags, ...perfArgs, script], {
      cwd: REPO,
      env: targetEnv(extraEnv),
      stdio: ['ignore', stdout, 'pipe', 'ipc'],
    }),
  );
  if (typeof stdout === 'number') closeSync(stdout);
  let stderrTail = '';
  child.stderr!.on('data', (piece: Buffer) => {
    stderrTail = (stderrTail + piece.toString()).slice(-2000);
  });
  const origin =
    ready === 'ipc'
      ? await readyWithin600s(child, name, portMessage(child).then((port) => `http://127.0.0.1:${port}`))
      : await originFromLogFile(child, logFile, name, 600_000, () => `:\n${stderrTail}`).catch((error: Error) => fail(error.message));
  child.once('exit', (code, signal) => fail(`${name} exited under load (${String(signal ?? code)}):\n${stderrTail}`));
  // The process that serves: the proxy itself, or the gateway's worker, which names itself on /health.
  const servingPid = ready === 'ipc' ? child.pid! : ((await (await fetch(`${origin}/health`)).json()) as { pid: number }).pid;
  const processes: CountedProcess[] =
    ready === 'ipc'
      ? [{ role: 'proxy', pid: servingPid }]
      : [
          { role: 'worker (serves)', pid: servingPid },
          { role: 'primary', pid: child.pid! },
        ];
  // The worker is valgrind's child, not this script's: killed on the way out with the rest (a SIGKILLed primary cannot stop it).
  if (ready === 'log') onStop(() => killQuietly(servingPid));
  if (ready === 'log' && servingPid === child.pid) fail(`${name}: /health answered from the primary (pid ${servingPid}); expected a cluster worker`);
  const dumps = new Map<number, number>();
  const control = (command: string, pid: number) => execFileSync('callgrind_control', [command, String(pid)], { env: targetEnv({}), stdio: 'ignore' });
  let instrumented = false;
  const files = { work: '', perfMap: `/tmp/perf-${servingPid}.map` };
  if (run.perfMaps) onStop(() => processes.forEach(({ pid }) => rmSync(`/tmp/perf-${pid}.map`, { force: true })));
  return {
    name,
    url: `${origin}/v1/chat/completions`,
    model,
    processes,
    files,
    logLines: () => (ready === 'log' ? requestLogLines(logFile, servingPid) : null),
    async count(work) {
      // Instrumentation goes on at the first window and stays on (switching it costs valgrind its translations).
      if (!instrumented) for (const { pid } of processes) control('--instr=on', pid);
      instrumented = true;
      for (const { pid } of processes) control('-z', pid);
      await work();
      for (const { pid } of processes) control('-d', pid);
      const counted = await Promise.all(processes.map(async ({ pid }) => dumped(pid)));
      files.work = counted[0]!.dump;
      return counted.map((one) => one.instructions);
    },
  };
  /** The instructions in a process's next callgrind dump, once valgrind has written it. */
  async function dumped(pid: number): Promise<{ instructions: number; dump: string }> {
    dumps.set(pid, (dumps.get(pid) ?? 0) + 1);
    const dump = `${outFile.replace('%p', String(pid))}.${dumps.get(pid)}`;
    for (let waited = 0; waited < 120_000; waited += 200) {
      const totals = existsSync(dump) ? /^totals: (\d+)/m.exec(readFileSync(dump, 'utf8')) : null;
      if (totals) return { instructions: Number(totals[1]), dump };
      await sleep(200);
    }
    return fail(`no callgrind dump from ${name} (pid ${pid}) within 120 s`);
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Sends `total` requests over CONNECTIONS keep-alive connections, each answer checked in full. */
export async function drive(target: Pick<CountedTarget, 'name' | 'url' | 'model'>, scenario: Scenario, total: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  let left = total;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(target.url, { method: 'POST', agent, headers: { 'content-type': 'application/json', ...CALLER_HEADERS } }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (part: Buffer) => parts.push(part));
        res.on('end', () => {
          const problem = checkAnswer(res.statusCode ?? 0, Buffer.concat(parts).toString(), scenario, target.model);
          if (problem) reject(new Error(`${target.name}, ${scenario.label}: ${problem}`));
          else resolve();
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(scenario.body);
    });
  try {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (left-- > 0) await one();
      }),
    );
  } finally {
    agent.destroy();
  }
}

function checkAnswer(status: number, body: string, scenario: Scenario, model: string): string | null {
  if (status !== 200) return `HTTP ${status}: ${body.slice(0, 200)}`;
  if (!scenario.streamed) return (JSON.parse(body) as { model?: unknown }).model === model ? null : 'wrong model';
  const events = body.split('\n\n').filter((frame) => frame.startsWith('data: '));
  if (events.at(-1) !== 'data: [DONE]') return 'the stream did not end with [DONE]';
  const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice(6)) as { model?: unknown });
  if (chunks.length !== 20 || chunks.some((chunk) => chunk.model !== model)) return `expected 20 chunks of model ${model}`;
  return null;
}
