// The budget of issue 25 as `npm run bench` checks it: each line the gateway (as ops run it: log to a file, metrics,
// a limited caller) against the got proxy measured in the same run, with the raw proxy beside it as the floor, the
// limit, and the verdict (met, or the exact gap); the Express proxy (got proxy + Express + the parsing no gateway can
// skip) beside them, as what the design spends before any feature. Open streams come from the STREAMS block
// (`npm run bench:streams`).
import { fixed, ms, signed } from './format.js';
import { readBlock } from './report.js';
import { scenario, type Scenario } from './scenarios.js';
import { marginalPerEvent, type Summary } from './summary.js';

type Get = (scenario: Scenario, target: string) => Summary;

/** Issue 25's limits. */
export const BUDGET = { json: 1.25, sse20: 1.3, perEventUs: 0.25, ttfeMs: 0.1, kibPerStream: 64 } as const;

const HEADER = [
  '| Budget (issue 25) | Scenario | Gateway | got proxy | Limit | Verdict | raw proxy (floor) | Express proxy (the design before any feature) |',
  '|---|---|---:|---:|---:|---|---:|---:|',
];

function cpuLine(get: Get, s: Scenario, factor: number): string {
  const gw = get(s, 'gateway').cpuPerRequest;
  const gp = get(s, 'got proxy').cpuPerRequest;
  const limit = factor * gp;
  const ratio = gw / gp;
  const verdict = gw <= limit ? `met (${fixed(ratio, 2)}×, ${fixed(limit - gw, 0)} µs to spare)` : `**not met**: ${fixed(ratio, 2)}×, ${fixed(gw - limit, 0)} µs per request over`;
  const xp = get(s, 'Express proxy').cpuPerRequest;
  return `| CPU per request ≤ ${factor}× got proxy | ${s.label} | ${fixed(gw, 0)} µs | ${fixed(gp, 0)} µs | ≤ ${fixed(limit, 0)} µs | ${verdict} | ${fixed(get(s, 'raw proxy').cpuPerRequest, 0)} µs | ${fixed(xp, 0)} µs (${fixed(xp / gp, 2)}× got proxy) |`;
}

function ttfeLine(get: Get, s: Scenario): string {
  const gw = get(s, 'gateway').ttfeP50;
  const gp = get(s, 'got proxy').ttfeP50;
  const limit = gp + BUDGET.ttfeMs;
  const verdict = gw <= limit ? `met (${signed(gw - gp)} ms)` : `**not met**: ${signed(gw - gp)} ms, ${fixed(gw - limit, 2)} ms over`;
  const xp = get(s, 'Express proxy').ttfeP50;
  return `| First event p50 ≤ got proxy + ${BUDGET.ttfeMs} ms | ${s.label} | ${ms(gw)} ms | ${ms(gp)} ms | ≤ ${ms(limit)} ms | ${verdict} | ${ms(get(s, 'raw proxy').ttfeP50)} ms | ${ms(xp)} ms (${signed(xp - gp)} ms) |`;
}

/** Marginal µs per event of a target, and ÷ 1,001 (the 1,000-event request's CPU over its events and [DONE]). */
export function perEvent(get: Get, target: string, long: Scenario, short: Scenario): { marginal: number; perAll: number } {
  const l = get(long, target);
  return { marginal: marginalPerEvent(l, get(short, target), long.events!, short.events!), perAll: l.cpuPerRequest / (long.events! + 1) };
}

const both = (p: { marginal: number; perAll: number }) => `${fixed(p.marginal, 2)} µs (÷ 1,001: ${fixed(p.perAll, 2)})`;

export function budgetTable(get: Get): string[] {
  const [json, sse20, sse1000, a20, a1000] = ['json', 'sse20', 'sse1000', 'anthropic20', 'anthropic1000'].map(scenario) as [Scenario, Scenario, Scenario, Scenario, Scenario];
  const gw = perEvent(get, 'gateway', sse1000, sse20);
  const gp = perEvent(get, 'got proxy', sse1000, sse20);
  const rp = perEvent(get, 'raw proxy', sse1000, sse20);
  const xp = perEvent(get, 'Express proxy', sse1000, sse20);
  const limit = gp.marginal + BUDGET.perEventUs;
  const eventVerdict = gw.marginal <= limit ? `met (${signed(gw.marginal - gp.marginal)} µs, marginal)` : `**not met** (marginal): ${signed(gw.marginal - gp.marginal)} µs, ${fixed(gw.marginal - limit, 2)} µs per event over`;
  const anthropic = perEvent(get, 'gateway', a1000, a20);
  const memoryVerdict = /\*\*Verdict\*\*: ([^\n]*)/.exec(readBlock('MEMORY') ?? '')?.[1];
  // streams-report.ts writes this line; its figure and verdict are carried over as they stand.
  const streams = /^- ([\d,]+) open streams ≤ \d+ KiB RSS each: ([^\n]*)$/m.exec(readBlock('STREAMS') ?? '');
  return [
    ...HEADER,
    cpuLine(get, json, BUDGET.json),
    cpuLine(get, sse20, BUDGET.sse20),
    `| CPU per event ≤ got proxy + ${BUDGET.perEventUs} µs | ${sse1000.label} | ${both(gw)} | ${both(gp)} | ≤ ${fixed(limit, 2)} µs | ${eventVerdict} | ${both(rp)} | ${both(xp)} |`,
    ttfeLine(get, sse20),
    ttfeLine(get, sse1000),
    `| Anthropic dialect per event (reported, no limit) | ${a1000.label} | ${both(anthropic)} | | | ${signed(anthropic.marginal - gw.marginal)} µs per event beside the OpenAI dialect's | | |`,
    `| Open streams ≤ ${BUDGET.kibPerStream} KiB RSS each | ${streams ? `${streams[1]} streams` : '10,000 streams'} | | | see [Open streams](#open-streams-npm-run-benchstreams) | ${streams ? streams[2] : 'not measured yet (`npm run bench:streams`)'} | | |`,
    `| Flat memory (reported, no limit) | 5-minute soak | | | see [Memory](#memory-at-steady-load) | ${memoryVerdict ?? 'not measured yet (`npm run bench -- --soak-memory`)'} | | |`,
  ];
}
