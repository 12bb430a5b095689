// `npm run bench` (issues 5 and 13): the built gateway (dist/, as ops run it: logs and metrics on, a routing
// table with two endpoints per provider) side by side with a pass-through proxy that calls its upstream through
// got (the floor for a gateway that keeps got), a raw Node proxy (the floor of all) and the got proxy behind
// Express with the parsing no gateway skips (the design before any feature, which issue 40's CPU lines are
// measured against), all in front of the same fast local mock provider, under the same autocannon load. The
// report ends with issue 40's budget table, all seven lines (budget-table.ts).
//
// Every party is its own process: the mock provider, the gateway, the three proxies, and the load generator
// (autocannon plus a sequential client for time to first event). This process only starts them, sends commands
// and writes the report, so the CPU time /proc gives for a target is that target's alone.
//
//   npm run bench                       the comparison (about 11 minutes with the defaults on a quiet machine); writes BENCHMARKS.md
//   npm run bench:quick                 1 round, short warm-ups and 3 s windows, prints only
//   npm run bench -- --soak-memory      steady mixed load on the gateway, RSS every 5 s; writes BENCHMARKS.md
//
// Environment: BENCH_SECONDS (10), BENCH_START_WARMUP_SECONDS (30, once per target when it starts),
// BENCH_WARMUP_SECONDS (2, before each window), BENCH_ROUNDS (3), BENCH_CONNECTIONS (32), BENCH_TTFE_REQUESTS
// (200), BENCH_MAX_OTHER_CPU (15, % of a core used by processes outside the bench above which a run is made
// again) and BENCH_RETRIES (2), BENCH_PIN (on|off, default on: targets on CPU 0, everything else on the other
// CPUs), BENCH_MEMORY_SECONDS (300; setting it also selects the memory mode), BENCH_MEMORY_WARMUP_SECONDS (30).
// Flags: --quick, --soak-memory[=seconds], --no-write. Loopback only; every child is killed on the way out.
//
// Modules: settings.ts (flags, env), scenarios.ts, targets.ts and bench-gateway.ts (starting the parties),
// load-client.ts, warm-up.ts, measured-window.ts, ttfe.ts, rounds.ts (the comparison), summary.ts,
// budget-table.ts and comparison-report.ts (the report), bench-text.ts (Method), memory-soak.ts.
import { killAll, killAllOnExit } from './children.js';
import { writeComparisonReport } from './comparison-report.js';
import { memorySoak } from './memory-soak.js';
import { ensureBuilt } from './report.js';
import { runComparison } from './rounds.js';
import { checkBenchArguments, SOAK } from './settings.js';
import { fatal } from './targets.js';

checkBenchArguments();
killAllOnExit('bench');
process.on('uncaughtException', (error) => fatal(error));
process.on('unhandledRejection', (error) => fatal(error));

ensureBuilt('bench');

try {
  if (SOAK) await memorySoak();
  else writeComparisonReport(await runComparison());
} catch (error) {
  fatal(error);
}
killAll();
process.exit(0);
