// The comparison of `npm run bench`: starts the mock provider, the gateway, the three proxies and the load
// generator (each its own process, pinned), warms each target up once, then runs the rounds: every scenario
// on every target that serves it (the order alternating), each a measured window, then a TTFE run over them all.
// Ends by checking that the gateway's request log and metrics saw every answer (they must be on).
import { setTimeout as sleep } from 'node:timers/promises';
import type { LoadResult, SequentialResult } from './bench-protocol.js';
import { countedRequests, startGateway } from './bench-gateway.js';
import { startLoadGenerator } from './load-client.js';
import { measuredWindow, type RunContext } from './measured-window.js';
import { rssBytes } from './proc-stats.js';
import { GATEWAY_MODEL, ONE_ENDPOINT, SCENARIOS, servesScenario } from './scenarios.js';
import { CONNECTIONS, OTHER_CPUS, PIN, RETRIES, ROUNDS, SECONDS, START_WARMUP_SECONDS, TARGET_CPUS, TTFE_REQUESTS, WARMUP_SECONDS } from './settings.js';
import { fatal, pin, PROXIES, startMockProvider, startProxies, type Target } from './targets.js';
import { ttfeRun } from './ttfe.js';
import { warmUp, type WarmUpSlices } from './warm-up.js';

export interface Sample {
  readonly load: LoadResult;
  readonly sequential: SequentialResult;
  readonly rss: number;
}

export interface ComparisonRun {
  /** Per `${scenario.id}:${target name}`, one sample per round. */
  readonly samples: ReadonlyMap<string, readonly Sample[]>;
  readonly warmUps: ReadonlyMap<string, WarmUpSlices>;
  readonly context: RunContext;
  /** TTFE answers of the gateway per endpoint (x-gateway-served-by), over the whole run. */
  readonly servedBy: Readonly<Record<string, number>>;
  readonly logLines: number;
  readonly counted: number;
  readonly elapsedMin: number;
}

export async function runComparison(): Promise<ComparisonRun> {
  const started = Date.now();
  const targetCount = 1 + PROXIES.length;
  const windows = SCENARIOS.reduce((n, s) => n + (s.gatewayOnly ? 1 : targetCount), 0);
  const estimate = ROUNDS * windows * (WARMUP_SECONDS + SECONDS + 3) + targetCount * START_WARMUP_SECONDS * 1.3 + 20;
  process.stderr.write(
    `bench: ${ROUNDS} round(s) × ${SCENARIOS.length} scenarios (${windows} windows a round), one-time warm-up ${START_WARMUP_SECONDS} s per target, ` +
      `${WARMUP_SECONDS} s warm-up + ${SECONDS} s measured at ${CONNECTIONS} connections, ${TTFE_REQUESTS} sequential requests for TTFE; ` +
      `pinning ${PIN ? `on (targets on CPU ${TARGET_CPUS}, the rest on ${OTHER_CPUS})` : 'off'}; about ${Math.ceil(estimate / 60)} min (more if runs are made again)\n`,
  );
  // Bounded even if every run had to be made again.
  const limitSeconds = estimate * (RETRIES + 2) + 120;
  setTimeout(() => fatal(new Error(`over the time limit (${Math.ceil(limitSeconds / 60)} min)`)), limitSeconds * 1000).unref();

  const mock = await startMockProvider();
  const proxies = await startProxies(mock.port);
  const gateway = await startGateway(mock.port);
  const loader = await startLoadGenerator();
  for (const pid of [mock.child.pid!, loader.pid, process.pid]) pin(pid, OTHER_CPUS);
  const targets: readonly Target[] = [gateway, ...proxies];
  for (const target of targets) pin(target.pid, TARGET_CPUS);
  const context: RunContext = { loader, benchPids: [process.pid, mock.child.pid!, loader.pid, gateway.primaryPid, ...targets.map((t) => t.pid)], foreignMax: 0, loadSideMax: 0, repeated: 0, gatewayAnswers: 0 };
  process.stderr.write(`bench: mock provider pid ${mock.child.pid}, ${targets.map((t) => `${t.name} pid ${t.pid}`).join(', ')} (the gateway's pid is its cluster worker's, from /health: the process measured; its primary, pid ${gateway.primaryPid}, is the bench's, not foreign load; gateway at ${gateway.origin}), load generator pid ${loader.pid}\n`);

  const warmUps = new Map<string, WarmUpSlices>();
  for (const target of targets) warmUps.set(target.name, await warmUp(context, target, SCENARIOS.filter((s) => servesScenario(target.name, s)), START_WARMUP_SECONDS));

  const samples = new Map<string, Sample[]>();
  const servedBy: Record<string, number> = {};
  for (let round = 1; round <= ROUNDS; round++) {
    const tag = `[round ${round}/${ROUNDS}]`;
    for (const [index, scenario] of SCENARIOS.entries()) {
      const serving = targets.filter((t) => servesScenario(t.name, scenario));
      const order = (round + index) % 2 === 1 ? serving : [...serving].reverse();
      const loads = new Map<Target, LoadResult>();
      for (const target of order) loads.set(target, await measuredWindow(context, target, scenario, tag));
      const sequential = await ttfeRun(context, serving, scenario, tag);
      for (const [t, target] of serving.entries()) {
        const key = `${scenario.id}:${target.name}`;
        samples.set(key, [...(samples.get(key) ?? []), { load: loads.get(target)!, sequential: sequential.perTarget[t]!, rss: rssBytes(target.pid) }]);
        if (target === gateway) for (const [name, n] of Object.entries(sequential.perTarget[t]!.servedBy)) servedBy[name] = (servedBy[name] ?? 0) + n;
      }
    }
  }

  // Logs and metrics were on: the log file has a line per answer (the batching destination flushes within about a
  // second; warm-ups and answers cut at a window's end are logged too), /metrics counted them.
  let logLines = gateway.logLines();
  for (let waited = 0; logLines < context.gatewayAnswers && waited < 5000; waited += 250) {
    await sleep(250);
    logLines = gateway.logLines();
  }
  const counted = await countedRequests(gateway);
  if (logLines < context.gatewayAnswers) throw new Error(`the gateway's log file has ${logLines} request lines from the measured process (pid ${gateway.pid}) for ${context.gatewayAnswers} answers: is the request log on, were lines dropped, or is another process serving?`);
  if (counted < context.gatewayAnswers * 0.99) throw new Error(`gateway_requests_total is ${counted} for ${context.gatewayAnswers} answers: are metrics on?`);
  // Both endpoints of each provider must have served: else the failover bookkeeping measured is one endpoint's.
  for (const model of new Set(SCENARIOS.map((s) => s.model).filter((m) => !(ONE_ENDPOINT && m === GATEWAY_MODEL)))) {
    const endpoints = Object.keys(servedBy).filter((value) => value.startsWith(`${model}#`));
    if (endpoints.length < 2) throw new Error(`the gateway's ${model} answers were served by ${endpoints.join(', ') || 'no named endpoint'}: expected both endpoints of bench-routes.yaml`);
  }
  await gateway.stop();
  return { samples, warmUps, context, servedBy, logLines, counted, elapsedMin: (Date.now() - started) / 60_000 };
}
