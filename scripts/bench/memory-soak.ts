// `npm run bench -- --soak-memory`: the gateway alone under steady mixed load (non-streamed, 20-event and
// 1,000-event requests in turn on every connection), its RSS from /proc and V8 heap from /metrics every 5 s,
// and whether RSS stayed flat after the warm-up. Writes the MEMORY block of BENCHMARKS.md.
import { setTimeout as sleep } from 'node:timers/promises';
import { METHOD, TEMPLATE } from './bench-text.js';
import { startGateway } from './bench-gateway.js';
import { fixed, int, mib, signed } from './format.js';
import { startLoadGenerator } from './load-client.js';
import { assertClean } from './measured-window.js';
import { rssBytes } from './proc-stats.js';
import { BENCHMARKS_MD, blockFile, describeMachine, packageVersion, writeBlock } from './report.js';
import { GATEWAY_MODEL, scenario } from './scenarios.js';
import { commandLine, CONNECTIONS, MEMORY_SAMPLE_SECONDS, MEMORY_SECONDS, MEMORY_WARMUP_SECONDS, OTHER_CPUS, TARGET_CPUS, WRITE } from './settings.js';
import { fatal, pin, startMockProvider } from './targets.js';

export async function memorySoak(): Promise<void> {
  const started = Date.now();
  const machine = describeMachine(`autocannon ${packageVersion('autocannon')}`);
  const total = MEMORY_WARMUP_SECONDS + MEMORY_SECONDS;
  process.stderr.write(`bench: memory soak, ${MEMORY_WARMUP_SECONDS} s warm-up + ${MEMORY_SECONDS} s at ${CONNECTIONS} connections (mixed requests), RSS every ${MEMORY_SAMPLE_SECONDS} s\n`);
  setTimeout(() => fatal(new Error('over the time limit')), (total + 180) * 1000).unref();

  const mock = await startMockProvider();
  const gateway = await startGateway(mock.port);
  const loader = await startLoadGenerator();
  pin(mock.child.pid!, OTHER_CPUS);
  pin(loader.pid, OTHER_CPUS);
  pin(process.pid, OTHER_CPUS);
  pin(gateway.pid, TARGET_CPUS);
  const benchPids = [process.pid, mock.child.pid!, gateway.pid, loader.pid];

  await sleep(1000);
  const idleRss = rssBytes(gateway.pid);
  // Per connection, in turn: non-streamed, 20 events, non-streamed, 20 events, 1,000 events.
  const mix = ['json', 'sse20', 'json', 'sse20', 'sse1000'].map((id) => scenario(id).body);
  const loadStarted = performance.now();
  const run = loader.send(
    { type: 'load', url: `${gateway.origin}/v1/chat/completions`, bodies: mix, connections: CONNECTIONS, warmupSeconds: 0, seconds: total, targetPid: gateway.pid, benchPids, expect: { model: GATEWAY_MODEL }, keepLatencies: false },
    (total + 60) * 1000,
  );
  interface MemorySample {
    readonly t: number;
    readonly rss: number;
    readonly heap: number;
  }
  const series: MemorySample[] = [];
  const heapUsed = async () => {
    const text = await (await fetch(`${gateway.origin}/metrics`)).text();
    return Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
  };
  let done = false;
  void run.finally(() => (done = true)).catch(() => {});
  for (let k = 0; k * MEMORY_SAMPLE_SECONDS <= total && !done; k++) {
    const wait = loadStarted + k * MEMORY_SAMPLE_SECONDS * 1000 - performance.now();
    if (wait > 0) await Promise.race([sleep(wait), run.catch(() => {})]);
    if (done) break;
    const t = k * MEMORY_SAMPLE_SECONDS;
    const sample = { t, rss: rssBytes(gateway.pid), heap: await heapUsed() };
    series.push(sample);
    if (t % 30 === 0) process.stderr.write(`[${String(t).padStart(4)} s] gateway RSS ${mib(sample.rss).toFixed(1)} MiB, heap used ${mib(sample.heap).toFixed(1)} MiB\n`);
  }
  const result = await run;
  assertClean(result, 'soak', total);
  const endRss = rssBytes(gateway.pid);
  await sleep(10_000);
  const idleAfter = { rss: rssBytes(gateway.pid), heap: await heapUsed() };
  await gateway.stop();

  const measured = series.filter((s) => s.t >= MEMORY_WARMUP_SECONDS);
  const afterWarmup = measured[0]!;
  const last = measured.at(-1)!;
  const maxRss = Math.max(...measured.map((s) => s.rss));
  const minRss = Math.min(...measured.map((s) => s.rss));
  // Single samples swing with the GC (tens of MiB at this load), so the verdict compares the mean of the
  // first and the last minute after warm-up and takes the trend over the whole measured window.
  const windowSeconds = Math.min(60, MEMORY_SECONDS / 2);
  const mean = (list: readonly MemorySample[], pick: (s: MemorySample) => number) => list.reduce((sum, s) => sum + pick(s), 0) / list.length;
  const firstWindow = measured.filter((s) => s.t <= afterWarmup.t + windowSeconds);
  const lastWindow = measured.filter((s) => s.t >= last.t - windowSeconds);
  const firstMeanRss = mean(firstWindow, (s) => s.rss);
  const lastMeanRss = mean(lastWindow, (s) => s.rss);
  const slope = slopePerMinute(measured.map((s) => [s.t, mib(s.rss)] as const));
  const heapSlope = slopePerMinute(measured.map((s) => [s.t, mib(s.heap)] as const));
  const growth = mib(lastMeanRss - firstMeanRss);
  const allowed = Math.max(16, mib(firstMeanRss) * 0.1);
  const flat = growth <= allowed && slope <= 2;
  const summary = `mean RSS ${mib(firstMeanRss).toFixed(0)} MiB over the first ${windowSeconds} s after warm-up, ${mib(lastMeanRss).toFixed(0)} MiB over the last ${windowSeconds} s (${signed(growth)} MiB${flat ? '' : `, allowed +${allowed.toFixed(0)}`}); trend ${signed(slope)} MiB/min${flat ? '' : ' (allowed +2.00)'}; max ${mib(maxRss).toFixed(0)} MiB`;
  const verdict = flat ? `met: ${summary}` : `**not met**: ${summary}`;

  const rps = (result.requests / result.elapsedMs) * 1000;
  const cpuPerRequest = ((result.targetCpuTicks / result.ticksPerSecond) * 1e6) / result.requests;
  const step = Math.max(MEMORY_SAMPLE_SECONDS, Math.round(total / 12 / MEMORY_SAMPLE_SECONDS) * MEMORY_SAMPLE_SECONDS);
  const shown = series.filter((s) => s.t % step === 0 || s === series.at(-1));
  const markdown = [
    '## Memory at steady load',
    '',
    ...machine,
    `- Command: \`${commandLine()}\``,
    `- Load: ${CONNECTIONS} connections, each sending in turn non-streamed, 20-event, non-streamed, 20-event and 1,000-event requests; ` +
      `${MEMORY_WARMUP_SECONDS} s warm-up, then ${MEMORY_SECONDS} s measured; RSS from \`/proc\` and V8 heap used from \`/metrics\` every ${MEMORY_SAMPLE_SECONDS} s.`,
    `- Served ${int(result.requests)} answers (${int(rps)}/s, gateway CPU ${fixed(cpuPerRequest, 0)} µs per answer on average over the mix), all checked: no error, timeout, non-2xx or failed check.`,
    '',
    '| | RSS (MiB) | V8 heap used (MiB) |',
    '|---|---:|---:|',
    `| idle, before load | ${mib(idleRss).toFixed(1)} | |`,
    `| after warm-up (t = ${afterWarmup.t} s) | ${mib(afterWarmup.rss).toFixed(1)} | ${mib(afterWarmup.heap).toFixed(1)} |`,
    `| end of load (t = ${last.t} s) | ${mib(last.rss).toFixed(1)} | ${mib(last.heap).toFixed(1)} |`,
    `| max / min after warm-up | ${mib(maxRss).toFixed(1)} / ${mib(minRss).toFixed(1)} | ${mib(Math.max(...measured.map((s) => s.heap))).toFixed(1)} / ${mib(Math.min(...measured.map((s) => s.heap))).toFixed(1)} |`,
    `| mean over the first / last ${windowSeconds} s after warm-up | ${mib(firstMeanRss).toFixed(1)} / ${mib(lastMeanRss).toFixed(1)} | ${mib(mean(firstWindow, (s) => s.heap)).toFixed(1)} / ${mib(mean(lastWindow, (s) => s.heap)).toFixed(1)} |`,
    `| least-squares trend after warm-up | ${signed(slope)} per min | ${signed(heapSlope)} per min |`,
    `| 10 s after the load stopped | ${mib(idleAfter.rss).toFixed(1)} | ${mib(idleAfter.heap).toFixed(1)} |`,
    '',
    `Samples (t in s: RSS / heap used, MiB): ${shown.map((s) => `${s.t}: ${mib(s.rss).toFixed(0)} / ${mib(s.heap).toFixed(0)}`).join(' · ')}; RSS right after the load: ${mib(endRss).toFixed(0)}.`,
    '',
    `"Flat" means: mean RSS over the last ${windowSeconds} s at most max(16 MiB, 10%) above the mean over the first ${windowSeconds} s after warm-up, and a least-squares RSS trend over the measured window of at most +2 MiB per minute (a leak of even 1 KiB per answer at this rate would show as tens of MiB per minute). (Single samples swing by tens of MiB with the GC at this load.)`,
    '',
    `**Verdict**: ${verdict}`,
    '',
    `- Wall time ${((Date.now() - started) / 60_000).toFixed(1)} min.`,
  ].join('\n');
  process.stdout.write(`\n${markdown}\n`);
  if (WRITE) {
    writeBlock('MEMORY', markdown, TEMPLATE);
    writeBlock('METHOD', METHOD, TEMPLATE);
    process.stderr.write(`bench: wrote ${BENCHMARKS_MD} and ${blockFile('METHOD')}\n`);
  }
}

function slopePerMinute(points: ReadonlyArray<readonly [number, number]>): number {
  if (points.length < 2) return 0;
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 60;
}
