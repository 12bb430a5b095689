// The fixed text `npm run bench` writes into BENCHMARKS.md: the file's skeleton when it does not exist yet, and
// the Method block (rewritten by every run, so it always describes the script that made the figures).

export const TEMPLATE = `# Benchmarks

The gateway's own cost per request, measured side by side with the got proxy (a pass-through proxy whose
upstream call is made by got, as the gateway's) and the thinnest possible Node proxy, as issue 13 asks.
\`npm run bench\` rewrites the figures below (the blocks between \`BENCH:…\` markers); everything else in this
file is kept as written.

<!-- BENCH:MAIN:BEGIN -->
(no run yet: \`npm run build && npm run bench\`)
<!-- BENCH:MAIN:END -->

<!-- BENCH:MEMORY:BEGIN -->
(no run yet: \`npm run build && npm run bench -- --soak-memory\`)
<!-- BENCH:MEMORY:END -->

<!-- BENCH:METHOD:BEGIN -->
<!-- BENCH:METHOD:END -->

## Optimisations

<!-- OPTIMISATIONS -->
`;

export const METHOD = `## Method

- **Processes.** Each party runs in its own process, so the CPU time that \`/proc/<pid>/stat\` gives (user +
  system, all threads, 10 ms ticks) is one target's alone: the mock provider, the gateway, the raw and got proxies,
  the load generator, and the orchestrator (\`scripts/bench/bench.ts\` and its modules), which only starts them,
  drains the gateway's log pipe and writes the report. With \`BENCH_PIN=on\` (the default on 2+ cores) the target
  under load runs on CPU 0 and everything else on the other CPUs (\`taskset -a\`), so a target never shares its
  core with the load generator or the provider.
- **The gateway** is \`dist/\` as built, run as ops run it: \`node server.js\`, default configuration (request
  log at \`info\` on stdout, drained by the orchestrator; metrics on; \`stream_usage\` on), but with the bench's
  routing table \`scripts/bench/bench-routes.yaml\` instead of the shipped one: the provider \`bench\` (OpenAI
  dialect) and \`bench-anthropic\` (anthropic dialect, a made-up key) each have **two endpoints**, both on the
  mock provider, so every request draws an endpoint and feeds its circuit breaker (failover bookkeeping is paid
  for); callers ask for \`bench/llama3.2\` (upstream \`llama3.2\`) or \`bench-anthropic/claude\`. The table is
  compiled at run time by the project's own compiler (\`scripts/routes/compile-routes.ts\`, as \`npm run build\`
  compiles \`routes.yaml\`) into \`generated/routes.js\` of a copy of \`dist/\` in a temporary folder under
  \`node_modules/.cache/\` (removed on exit); \`routes.yaml\`, \`src/generated/\` and \`dist/\` are not touched.
  Both endpoints must have served (\`x-gateway-served-by\` of the TTFE answers), or the run fails.
- **Mock provider** (\`bench-mock-provider.ts\`): node:http, keep-alive, precomputed buffers. Non-streamed: a
  fixed 345-byte \`chat.completion\`. Streamed: \`max_tokens\` chunk events plus \`data: [DONE]\`, written at once;
  as OpenAI does, a request asking for usage (the gateway does so by default, \`stream_usage\`) gets
  \`"usage":null\` in every chunk and a usage chunk, which the gateway hides from the caller. On
  \`POST /v1/messages\` (the anthropic dialect) it answers Anthropic's native event stream: \`message_start\`,
  \`content_block_start\`, \`max_tokens\` \`content_block_delta\` text deltas, \`content_block_stop\`,
  \`message_delta\` with usage, \`message_stop\`, each as \`event:\` and \`data:\` lines; the gateway turns it into
  OpenAI chunks (the role, one per delta, the finish) and \`[DONE]\`.
- **Raw proxy** (\`raw-proxy.ts\`): node:http server, one keep-alive \`http.Agent\` to the mock, caller's method,
  path and headers passed as they are, request and response piped, nothing parsed or rewritten; a 502 on an
  upstream error, the upstream request aborted when the caller leaves. Transpiled to plain JavaScript and run
  with \`node\`, like \`dist/\`. The floor.
- **got proxy** (\`got-proxy.ts\`): the raw proxy with its upstream call made by \`got.stream\`, configured as the
  gateway configures got (every fixed option in \`got.extend\` at start-up, timeouts included). Nothing else
  differs, so *got proxy ÷ raw* is got's own cost: the least a gateway that keeps got can reach, and what the
  budget of issue 13 is measured against.
- **Express proxy** (\`got-proxy.ts\` with \`PROXY_FRONT=express\`): the got proxy behind Express 5 (the design keeps both), with the work
  no gateway can skip: the caller's body read whole and parsed, its model rewritten and the body sent upstream
  through got, and a non-streamed answer read whole, parsed and written again with its model set; streams piped as
  the got proxy pipes them. No request log, metrics, callers, failover, validation or bounds. So *Express proxy ÷
  got proxy* is what the design costs before any feature, and *gateway ÷ Express proxy* what the features cost
  (added in the sixth session of issue 25, when the budget lines turned out to sit at this proxy's cost).
- **Scenarios**: non-streamed; 20- and 1,000-event streams (OpenAI dialect), on the four targets; and
  20- and 1,000-event streams through the **anthropic dialect** (the mock sends 18 and 998 text deltas, the
  caller gets 20 and 1,000 chunks), on the gateway alone (the proxies translate nothing).
- **Warm-up.** V8 needs several seconds of load before a process's CPU per request settles (a 1–3 s warm-up
  overstated the gateway's by up to 2×, issue 13). So each target, right after it starts, gets a **one-time
  warm-up** of \`BENCH_START_WARMUP_SECONDS\` (30) 1-s slices of load, every scenario it serves in turn (the
  gateway's five scenarios thus get 6 slices each); each slice's CPU per request is recorded, and the report's
  *Settling* line shows each scenario's first and last slice beside its measured median, and from which second of
  the warm-up on every slice stayed within 15% of that median. The default comes from
  a run with 40 s of it (Node 24, AMD EPYC, 2 cores shared with other sessions, 2026-11-23): the gateway's
  non-streamed figure was 1,252 µs in its first slice, 476 five seconds later, and at its settled level
  (367–383 µs, measured 424 under heavy outside load) from about 20 s of mixed load on; the got proxy's
  (436 → 577 → 487 → 240 µs …) from about 10 s. 30 s leaves a margin. Then every measured window has its own
  short warm-up of \`BENCH_WARMUP_SECONDS\` (2) with its scenario, which only brings the connections and caches
  back to that scenario.
- **Load**: autocannon (programmatic, in \`load-generator.ts\`), a fixed number of keep-alive connections each
  sending its next request as soon as the previous answer is complete, the window's warm-up, then the measured
  window. CPU µs per request = the target's CPU time over the window ÷ answers completed in it. Latency is per
  answer, to its last byte. Every answer is checked in passing (the \`model\` the caller must see, a stream's
  first event and final \`[DONE]\`); any error, timeout, non-2xx or failed check fails the run, warm-ups included.
- **Per event**: the budget uses the marginal cost of an event, (CPU per 1,000-event request − CPU per 20-event
  request) ÷ 980, in which everything paid once per request cancels out; the cost of the 1,000-event request
  ÷ 1,001 (events and \`[DONE]\`) is shown beside it. The anthropic dialect's marginal cost is computed alike.
- **Time to first event (TTFE)**: with no other load, one request at a time over one keep-alive connection per
  target, alternating between the targets (so anything else happening on the machine hits them alike), the time
  from sending the request to the first body byte of the first \`data:\` event (for non-streamed answers: the
  first body byte). These answers are checked in full: status, content type, every chunk's \`model\` (the
  routing string the caller asked for), \`object\`, the number of events, no \`usage\` the caller did not ask
  for, \`[DONE]\` last.
- **Rounds**: every round runs each scenario on every target that serves it in turn (the order alternates), so
  drift on the machine hits them all; figures are the median over the rounds (CPU per request also shows the
  rounds' range). *Other CPU* is the machine's busy time (\`/proc/stat\`) during a measured window not spent by
  any bench process. A run during which it exceeds \`BENCH_MAX_OTHER_CPU\` (15% of a core) is made again, up to
  \`BENCH_RETRIES\` (2) times, and the quietest attempt is kept. At the end, the gateway's log lines and its
  \`gateway_requests_total\` must account for every answer it gave (logs and metrics were on).
- **Memory** (\`npm run bench -- --soak-memory\`): the gateway alone (same routing table) under the same load
  generator, each connection sending in turn non-streamed, 20-event, non-streamed, 20-event and 1,000-event
  requests, for \`BENCH_MEMORY_WARMUP_SECONDS\` (30) + \`BENCH_MEMORY_SECONDS\` (300); RSS from \`/proc\` and V8
  heap used from \`/metrics\` every 5 s.
- **Settings**: \`BENCH_SECONDS\` (10), \`BENCH_START_WARMUP_SECONDS\` (30), \`BENCH_WARMUP_SECONDS\` (2),
  \`BENCH_ROUNDS\` (3), \`BENCH_CONNECTIONS\` (32), \`BENCH_TTFE_REQUESTS\` (200), \`BENCH_PIN\` (\`on\`/\`off\`),
  \`BENCH_MAX_OTHER_CPU\`, \`BENCH_RETRIES\`. \`npm run bench:quick\` (1 round, 5 s one-time warm-up, 1 + 3 s
  windows, no repeats) prints without writing this file. \`npm run build\` first: the bench measures \`dist/\`
  as it is.
`;
