// Issue 40's budget as `npm run bench` reports it: one table with all seven lines. Lines 1 and 3 are measured in
// this run: CPU per request against the Express proxy (the got proxy behind Express with the parsing no gateway
// skips: what the design costs before any feature), per event and first event against the got proxy; the got
// proxy and the raw proxy beside them as the floors they are. Lines 2, 4, 5, 6 and 7 are carried over from the
// blocks of the benches that measure them (budget-carried.ts), each with the run it came from.
import { carriedRows, type BudgetRow, type ReadBlock } from './budget-carried.js';
import { fixed, ms, signed } from './format.js';
import { readBlock } from './report.js';
import { scenario, type Scenario } from './scenarios.js';
import { marginalPerEvent, type Summary } from './summary.js';

type Get = (scenario: Scenario, target: string) => Summary;

/** Issue 40's limits on the lines this run measures. */
export const BUDGET = { json: 1.1, sse20: 1.15, perEventUs: 0.25, ttfeMs: 0.1 } as const;

const THIS_RUN = 'this run';
const HEADER = [
  '| Budget (issue 40) | Scenario | Gateway | Limit | Verdict | Express proxy | got proxy (floor) | raw proxy (floor) | From |',
  '|---|---|---:|---:|---|---:|---:|---:|---|',
];

/** Line 1: CPU per request ≤ `factor`× the Express proxy. */
export function cpuRow(get: Get, s: Scenario, factor: number): BudgetRow {
  const [gw, xp, gp, rp] = ['gateway', 'Express proxy', 'got proxy', 'raw proxy'].map((t) => get(s, t).cpuPerRequest) as [number, number, number, number];
  const limit = factor * xp;
  const ratio = `${fixed(gw / xp, 2)}×`;
  return {
    line: `1. CPU per request ≤ ${factor}× Express proxy`,
    scenario: s.label,
    gateway: `${fixed(gw, 0)} µs (${ratio})`,
    limit: `≤ ${fixed(limit, 0)} µs`,
    verdict: gw <= limit ? `met (${ratio}, ${fixed(limit - gw, 0)} µs to spare)` : `**not met**: ${ratio}, ${fixed(gw - limit, 0)} µs per request over`,
    express: `${fixed(xp, 0)} µs`,
    got: `${fixed(gp, 0)} µs (${fixed(gw / gp, 2)}×)`,
    raw: `${fixed(rp, 0)} µs`,
    from: THIS_RUN,
  };
}

/** Line 3: first event p50 ≤ the got proxy's + 0.1 ms. */
export function ttfeRow(get: Get, s: Scenario): BudgetRow {
  const [gw, xp, gp, rp] = ['gateway', 'Express proxy', 'got proxy', 'raw proxy'].map((t) => get(s, t).ttfeP50) as [number, number, number, number];
  const limit = gp + BUDGET.ttfeMs;
  return {
    line: `3. First event p50 ≤ got proxy + ${BUDGET.ttfeMs} ms`,
    scenario: s.label,
    gateway: `${ms(gw)} ms`,
    limit: `≤ ${ms(limit)} ms`,
    verdict: gw <= limit ? `met (${signed(gw - gp)} ms)` : `**not met**: ${signed(gw - gp)} ms, ${fixed(gw - limit, 2)} ms over`,
    express: `${ms(xp)} ms`,
    got: `${ms(gp)} ms`,
    raw: `${ms(rp)} ms`,
    from: THIS_RUN,
  };
}

/** Marginal µs per event of a target, and ÷ 1,001 (the 1,000-event request's CPU over its events and [DONE]). */
export function perEvent(get: Get, target: string, long: Scenario, short: Scenario): { marginal: number; perAll: number } {
  const l = get(long, target);
  return { marginal: marginalPerEvent(l, get(short, target), long.events!, short.events!), perAll: l.cpuPerRequest / (long.events! + 1) };
}

const both = (p: { marginal: number; perAll: number }) => `${fixed(p.marginal, 2)} µs (÷ 1,001: ${fixed(p.perAll, 2)})`;

/** Line 3: CPU per event (marginal, from the 1,000- and 20-event streams) ≤ the got proxy's + 0.25 µs. */
export function perEventRow(get: Get, long: Scenario, short: Scenario): BudgetRow {
  const [gw, xp, gp, rp] = ['gateway', 'Express proxy', 'got proxy', 'raw proxy'].map((t) => perEvent(get, t, long, short));
  const limit = gp!.marginal + BUDGET.perEventUs;
  const gap = signed(gw!.marginal - gp!.marginal);
  return {
    line: `3. CPU per event ≤ got proxy + ${BUDGET.perEventUs} µs (marginal)`,
    scenario: long.label,
    gateway: both(gw!),
    limit: `≤ ${fixed(limit, 2)} µs`,
    verdict: gw!.marginal <= limit ? `met (${gap} µs)` : `**not met**: ${gap} µs, ${fixed(gw!.marginal - limit, 2)} µs per event over`,
    express: both(xp!),
    got: both(gp!),
    raw: both(rp!),
    from: THIS_RUN,
  };
}

export const tableRow = (r: BudgetRow) => `| ${r.line} | ${r.scenario} | ${r.gateway} | ${r.limit} | ${r.verdict} | ${r.express} | ${r.got} | ${r.raw} | ${r.from} |`;

/** Every line of issue 40's budget: 1 and 3 from `get` (this run), the others from the blocks `read` returns. */
export function budgetTable(get: Get, read: ReadBlock = readBlock): string[] {
  const [json, sse20, sse1000, a20, a1000] = ['json', 'sse20', 'sse1000', 'anthropic20', 'anthropic1000'].map(scenario) as [Scenario, Scenario, Scenario, Scenario, Scenario];
  const { line2, rest } = carriedRows(read);
  const anthropic = perEvent(get, 'gateway', a1000, a20);
  const openai = perEvent(get, 'gateway', sse1000, sse20);
  return [
    ...HEADER,
    ...[cpuRow(get, json, BUDGET.json), cpuRow(get, sse20, BUDGET.sse20), ...line2, perEventRow(get, sse1000, sse20), ttfeRow(get, sse20), ttfeRow(get, sse1000), ...rest].map(tableRow),
    `| Anthropic dialect per event (reported, no limit) | ${a1000.label} | ${both(anthropic)} | | ${signed(anthropic.marginal - openai.marginal)} µs per event beside the OpenAI dialect's | | | | ${THIS_RUN} |`,
  ];
}
