// Issue 40's line 7 as `npm run bench:tracing-cpu` words it (and budget-carried.ts reads it back): tracing on costs
// at most +25% CPU per request over tracing off, judged on the medians of the rounds.

/** Tracing on ≤ 1.25× the CPU per request of tracing off. */
export const TRACING_BUDGET = 1.25;

const signed = (n: number, suffix: string) => `${n >= 0 ? '+' : '−'}${Math.abs(n).toFixed(0)}${suffix}`;

/** The verdict bullet for one kind of request, from the CPU µs per request with tracing off and on. */
export function tracingVerdict(label: string, offUs: number, onUs: number): string {
  const limit = TRACING_BUDGET * offUs;
  const verdict = onUs <= limit ? `met (${(limit - onUs).toFixed(0)} µs to spare)` : `**not met**: ${(onUs - limit).toFixed(0)} µs per request over ${TRACING_BUDGET}× off (${limit.toFixed(0)} µs)`;
  return `- Issue 40, line 7, ${label}: tracing on ${signed((onUs / offUs - 1) * 100, '%')} (${signed(onUs - offUs, ' µs')}) over off: ${verdict}`;
}
