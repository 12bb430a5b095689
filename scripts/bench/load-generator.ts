// The client side of `npm run bench`, in its own process so that its CPU is never mixed with a target's
// (bench.ts forks it with IPC and sends one command at a time). Load is autocannon's programmatic API;
// the CPU of the target is read from /proc right here, at the edges of the measured window.
// Time to first event is measured with node:http, one request at a time, and every one of those
// answers is checked in full.
import autocannon, { type AutocannonOptions, type AutocannonResult } from 'autocannon';
import { Agent, request } from 'node:http';
import { cpuTicks, cpuTicksOf, clockTicksPerSecond, machineBusyTicks, percentile } from './proc-stats.js';
import { CALLER_HEADERS, quickCheck, type Command, type Expectation, type LoadCommand, type LoadResult, type Problems, type Reply, type SequentialCommand, type SequentialResult, type SequentialResults } from './bench-protocol.js';

interface Run {
  readonly result: AutocannonResult;
  readonly responses: number;
  readonly bytes: number;
  readonly latencies: Float64Array;
  readonly mismatchSample: string | null;
}

function runAutocannon(command: LoadCommand, seconds: number, keepLatencies: boolean): Promise<Run> {
  const check = quickCheck(command.expect);
  let mismatchSample: string | null = null;
  let latencies = new Float64Array(keepLatencies ? 65536 : 0);
  let responses = 0;
  let bytes = 0;
  const options: AutocannonOptions = {
    url: command.url,
    connections: command.connections,
    duration: seconds,
    timeout: 30,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...CALLER_HEADERS },
    verifyBody(body) {
      if (check(body)) return true;
      mismatchSample ??= body.length > 600 ? `${body.slice(0, 300)} … ${body.slice(-300)}` : body;
      return false;
    },
  };
  if (command.bodies.length === 1) options.body = command.bodies[0]!;
  else options.requests = command.bodies.map((body) => ({ method: 'POST', body }));
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error, result) => {
      if (error) reject(error);
      else resolve({ result, responses, bytes, latencies: latencies.subarray(0, keepLatencies ? responses : 0), mismatchSample });
    });
    instance.on('response', (_client: unknown, _status: number, resBytes: number, responseTime: number) => {
      if (keepLatencies) {
        if (responses === latencies.length) {
          const grown = new Float64Array(latencies.length * 2);
          grown.set(latencies);
          latencies = grown;
        }
        latencies[responses] = responseTime;
      }
      responses++;
      bytes += resBytes;
    });
  });
}

function problemsOf(run: Run): Problems {
  const { errors, timeouts, non2xx, mismatches } = run.result;
  return { errors, timeouts, non2xx, mismatches, sample: run.mismatchSample };
}

function hasProblems(p: Problems): boolean {
  return p.errors + p.timeouts + p.non2xx + p.mismatches > 0;
}

async function load(command: LoadCommand): Promise<LoadResult> {
  let warmupRequests = 0;
  if (command.warmupSeconds > 0) {
    const warm = await runAutocannon(command, command.warmupSeconds, false);
    warmupRequests = warm.responses;
    const problems = problemsOf(warm);
    if (hasProblems(problems)) throw new Error(`warm-up against ${command.url} failed: ${JSON.stringify(problems)}`);
  }
  const busy0 = machineBusyTicks();
  const ours0 = cpuTicksOf(command.benchPids);
  const target0 = cpuTicks(command.targetPid);
  const started = performance.now();
  const run = await runAutocannon(command, command.seconds, command.keepLatencies);
  const elapsedMs = performance.now() - started;
  const targetCpuTicks = cpuTicks(command.targetPid) - target0;
  const oursCpuTicks = cpuTicksOf(command.benchPids) - ours0;
  const foreignCpuTicks = Math.max(0, machineBusyTicks() - busy0 - oursCpuTicks);
  const sorted = run.latencies.sort();
  return {
    requests: run.responses,
    elapsedMs,
    targetCpuTicks,
    foreignCpuTicks,
    loadSideCpuTicks: Math.max(0, oursCpuTicks - targetCpuTicks),
    ticksPerSecond: clockTicksPerSecond(),
    latencyP50Ms: command.keepLatencies ? percentile(sorted, 50) : run.result.latency.p50,
    latencyP99Ms: command.keepLatencies ? percentile(sorted, 99) : run.result.latency.p99,
    bytes: run.bytes,
    warmupRequests,
    problems: problemsOf(run),
  };
}

interface Timed {
  readonly firstByteMs: number;
  readonly totalMs: number;
  /** The gateway's x-gateway-served-by header (which endpoint served), '' when none. */
  readonly servedBy: string;
}

interface SequentialTarget {
  readonly url: URL;
  readonly expect: Expectation;
}

function oneRequest(command: SequentialCommand, target: SequentialTarget, agent: Agent): Promise<Timed> {
  const { url } = target;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let firstByteMs = Number.NaN;
    let seen = '';
    const started = performance.now();
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(command.body), ...CALLER_HEADERS } },
      (res) => {
        res.on('data', (piece: Buffer) => {
          if (Number.isNaN(firstByteMs)) {
            // Streams: the first byte of the first `data:` line; JSON: the first body byte.
            if (command.events === null) firstByteMs = performance.now() - started;
            else if ((seen += piece.toString('latin1', 0, Math.min(piece.length, 64))).includes('data:')) firstByteMs = performance.now() - started;
          }
          chunks.push(piece);
        });
        res.on('end', () => {
          const totalMs = performance.now() - started;
          try {
            verify(command, target, res.statusCode ?? 0, String(res.headers['content-type'] ?? ''), Buffer.concat(chunks).toString('utf8'));
          } catch (error) {
            reject(error);
            return;
          }
          resolve({ firstByteMs, totalMs, servedBy: String(res.headers['x-gateway-served-by'] ?? '') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
    req.end(command.body);
  });
}

/** The full check: status, content type, every chunk's model, the number of events, no usage the caller did not ask for, [DONE]. */
function verify(command: SequentialCommand, target: SequentialTarget, status: number, contentType: string, body: string): void {
  const fail = (why: string) => {
    throw new Error(`${target.url.href}: ${why}; body: ${body.length > 400 ? `${body.slice(0, 400)}…` : body}`);
  };
  if (status !== 200) fail(`status ${status}`);
  const { expect } = target;
  if (command.events === null) {
    if (!contentType.startsWith('application/json')) fail(`content-type ${contentType}`);
    const parsed = JSON.parse(body) as { model?: unknown; choices?: Array<{ message?: { content?: unknown } }> };
    if (parsed.model !== expect.model) fail(`model ${String(parsed.model)}, expected ${expect.model}`);
    if (typeof parsed.choices?.[0]?.message?.content !== 'string') fail('no choices[0].message.content');
    return;
  }
  if (!contentType.startsWith('text/event-stream')) fail(`content-type ${contentType}`);
  if (!body.endsWith('data: [DONE]\n\n')) fail('the stream does not end with data: [DONE]');
  const frames = body.split('\n\n').filter((frame) => frame !== '');
  const data = frames.filter((frame) => frame.startsWith('data: '));
  if (data.length !== frames.length) fail('a frame that is not a data event');
  if (data.length !== command.events + 1) fail(`${data.length - 1} events before [DONE], expected ${command.events}`);
  for (let i = 0; i < data.length - 1; i++) {
    const chunk = JSON.parse(data[i]!.slice(6)) as { model?: unknown; usage?: unknown; object?: unknown };
    if (chunk.model !== expect.model) fail(`event ${i}: model ${String(chunk.model)}, expected ${expect.model}`);
    if (chunk.object !== 'chat.completion.chunk') fail(`event ${i}: object ${String(chunk.object)}`);
    if ('usage' in chunk) fail(`event ${i}: usage the caller did not ask for`);
  }
}

async function sequential(command: SequentialCommand): Promise<SequentialResults> {
  const targets: SequentialTarget[] = command.targets.map((t) => ({ url: new URL(t.url), expect: t.expect }));
  // One keep-alive connection per target (fresh for each command: a target may have closed an idle one).
  const agents = targets.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  const firstBytes = targets.map(() => new Float64Array(command.count));
  const totals = targets.map(() => new Float64Array(command.count));
  const servedBy = targets.map((): Record<string, number> => ({}));
  let elapsedMs = 0;
  let foreignCpuTicks = 0;
  try {
    for (let i = 0; i < command.warmup; i++) for (const [t, target] of targets.entries()) await oneRequest(command, target, agents[t]!);
    const busy0 = machineBusyTicks();
    const ours0 = cpuTicksOf(command.benchPids);
    const started = performance.now();
    for (let i = 0; i < command.count; i++) {
      // Alternate which target goes first, so neither always follows the other.
      for (let k = 0; k < targets.length; k++) {
        const t = (i + k) % targets.length;
        const timed = await oneRequest(command, targets[t]!, agents[t]!);
        firstBytes[t]![i] = timed.firstByteMs;
        totals[t]![i] = timed.totalMs;
        if (timed.servedBy !== '') servedBy[t]![timed.servedBy] = (servedBy[t]![timed.servedBy] ?? 0) + 1;
      }
    }
    elapsedMs = performance.now() - started;
    foreignCpuTicks = Math.max(0, machineBusyTicks() - busy0 - (cpuTicksOf(command.benchPids) - ours0));
  } finally {
    for (const agent of agents) agent.destroy();
  }
  const perTarget = targets.map((_, t): SequentialResult => {
    const first = firstBytes[t]!.sort();
    const total = totals[t]!.sort();
    return { firstByteP50Ms: percentile(first, 50), firstByteP99Ms: percentile(first, 99), totalP50Ms: percentile(total, 50), count: command.count, servedBy: servedBy[t]! };
  });
  return { perTarget, elapsedMs, foreignCpuTicks, ticksPerSecond: clockTicksPerSecond() };
}

process.on('message', (message: Command) => {
  const work = message.type === 'load' ? load(message) : sequential(message);
  work.then(
    (result) => process.send?.({ id: message.id, ok: true, result } satisfies Reply),
    (error: unknown) => process.send?.({ id: message.id, ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies Reply),
  );
});
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
