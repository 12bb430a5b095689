// The lines of issue 40's budget that other benches measure, carried into `npm run bench`'s budget table as their
// blocks state them: each with its figure, its verdict and the run it came from, or "not measured yet (command)".
// Line 2 from INSTRUCTIONS, line 4 from LATENCY (docs/performance.md), line 5 from STREAMS, line 6 from
// ALLOCATION, line 7 from TRACING-CPU. The blocks' wording is their reports' (instructions-report.ts, latency.ts,
// streams-report.ts, allocation.ts, tracing-cpu.ts): a block this cannot read counts as not measured.

/** A row of the budget table: figures as text, ready for the table. */
export interface BudgetRow {
  readonly line: string;
  readonly scenario: string;
  readonly gateway: string;
  readonly limit: string;
  readonly verdict: string;
  readonly express: string;
  readonly got: string;
  readonly raw: string;
  readonly from: string;
}

export type ReadBlock = (name: string) => string | null;

/** `BLOCK, 2026-11-28 20:18Z, build 84d6601`: which run a figure came from (its Date and Measured lines). */
export function provenance(name: string, block: string): string {
  const date = /^- Date: (\d{4}-\d\d-\d\d)T(\d\d:\d\d)/m.exec(block);
  const build = /on commit (\S+)( \+ uncommitted changes in src\/)?/.exec(block);
  return `${name}, ${date ? `${date[1]} ${date[2]}Z` : 'date unknown'}, build ${build ? `${build[1]}${build[2] ? ' + uncommitted src/' : ''}` : 'unknown'}`;
}

const row = (r: Partial<BudgetRow> & Pick<BudgetRow, 'line' | 'scenario' | 'verdict' | 'from'>): BudgetRow => ({ gateway: '', limit: '', express: '', got: '', raw: '', ...r });
const notMeasured = (line: string, scenario: string, command: string, why = ''): BudgetRow => row({ line, scenario, verdict: `not measured yet (\`${command}\`)${why}`, from: '' });
/** `+415 µs` / `−291 µs` as a number (the reports write a real minus sign). */
const micro = (text: string) => Number(text.replace('−', '-').replace(/[^\d.-]/g, ''));

export const LINE2 = '2. Instructions per request ≤ 1.1× Express proxy';
export const LINE4 = '4. Added latency over the raw proxy, concurrency 1';
export const LINE5 = '5. 10,000 open streams ≤ 64 KiB RSS each';
export const LINE6 = "6. Allocation per request ≤ got proxy's + 16 KB";
export const LINE7 = '7. Tracing on ≤ +25% CPU per request over off';
const KINDS = ['non-streamed', 'streamed, 20 events'] as const;

function instructions(read: ReadBlock): BudgetRow[] {
  const block = read('INSTRUCTIONS');
  const rows = block ? [...block.matchAll(/^\| (non-streamed|streamed, 20 events) \| ([^|]+) \| ([^|]+) \| ([^|]+) \| [^|]+ \| [^|]+ \| ([^|]+) \|(?: [^|]+ \|){3} \*\*([\d.]+)×\*\* (met|NOT met) \|$/gm)] : [];
  if (!block || rows.length === 0) return [notMeasured(LINE2, 'both kinds', 'npm run bench:instructions')];
  return rows.map(([, scenario, raw, got, express, gateway, ratio, met]) =>
    row({
      line: LINE2,
      scenario: scenario!,
      gateway: `${gateway!.trim()} (${ratio}×)`,
      limit: `≤ ${(1.1 * parseFloat(express!)).toFixed(2)} M`,
      verdict: met === 'met' ? `met (${ratio}×)` : `**not met**: ${ratio}×, ${(parseFloat(gateway!) - 1.1 * parseFloat(express!)).toFixed(2)} M per request over`,
      express: express!.trim(),
      got: got!.trim(),
      raw: raw!.trim(),
      from: provenance('INSTRUCTIONS', block),
    }),
  );
}

function latency(read: ReadBlock): BudgetRow[] {
  const block = read('LATENCY');
  const bullets = block ? [...block.matchAll(/^- (?:Issue 40, line 4, )?(non-streamed, total time|20-event stream, first event): added p50 (\S+ µs) \(≤ \+(\d+) µs: [^)]+\), p99 (\S+ µs) \(≤ \+(\d+) µs: [^)]+\)/gm)] : [];
  if (!block || bullets.length === 0) return [notMeasured(LINE4, 'both kinds', 'npm run bench:latency')];
  // The proxies' added p50 / p99 in the table's column of that kind: `| got proxy | 668 µs / 3503 µs (+188 µs / −374 µs) | … |`.
  const added = (target: string, column: number) => new RegExp(`^\\| ${target} \\|([^|]+)\\|([^|]+)\\|`, 'm').exec(block)?.[column]?.match(/\(([^)]+)\)/)?.[1] ?? '';
  return bullets.map(([, kind, p50, p50Limit, p99, p99Limit], i) => {
    const over = [[p50!, p50Limit!, 'p50'], [p99!, p99Limit!, 'p99']].filter(([v, l]) => micro(v!) > Number(l)).map(([v, l, name]) => `${name} ${micro(v!) - Number(l)} µs over`);
    return row({
      line: LINE4,
      scenario: kind!,
      gateway: `p50 ${p50} / p99 ${p99}`,
      limit: `p50 ≤ +${p50Limit} / p99 ≤ +${p99Limit} µs`,
      verdict: over.length === 0 ? 'met' : `**not met**: ${over.join(', ')}`,
      express: added('Express proxy', i + 1),
      got: added('got proxy', i + 1),
      raw: 'the base',
      from: provenance('LATENCY', block),
    });
  });
}

function streams(read: ReadBlock): BudgetRow[] {
  const block = read('STREAMS');
  const rss = block ? /^- ([\d,]+) open streams ≤ \d+ KiB RSS each: ([\d.]+ KiB) — (.*?)(?: \(raw proxy[^)]*? ([\d.]+ KiB) at [\d,]+\))?(?: \(\*\*[\d,]+ not reached.*)?$/m.exec(block) : null;
  if (!block || !rss) return [notMeasured(LINE5, '10,000 streams', 'npm run bench:streams')];
  if (!/issue 40, line 5/.test(block)) return [notMeasured(LINE5, '10,000 streams', 'npm run bench:streams', `: the last run (${provenance('STREAMS', block)}) is issue 25's, ${rss[1]} streams at ${rss[2]} each`)];
  const check = (start: string, name: string) => {
    const bullet = block.split('\n').find((text) => text.startsWith(`- ${start}`));
    return bullet === undefined ? `${name} not reported` : `${name} ${bullet.includes('**not met**') ? '**not met**' : 'met'}`;
  };
  return [
    row({
      line: LINE5,
      scenario: `${rss[1]} streams`,
      gateway: `${rss[2]} each`,
      limit: '≤ 64 KiB',
      verdict: [`RSS ${rss[3]!.trim()}`, check('/health', '/health < 50 ms'), check('event-loop lag', 'lag p99 ≤ 20 ms'), check('none dropped', 'none dropped')].join('; '),
      raw: rss[4] ?? '',
      from: provenance('STREAMS', block),
    }),
  ];
}

function allocation(read: ReadBlock): BudgetRow[] {
  const block = read('ALLOCATION');
  const rows = block ? [...block.matchAll(/^\| (non-streamed|streamed, 20 events) \| ([\d.]+) \| \*\*([\d.]+)\*\* \([^)]*\) \| ([\d.]+) \| [^|]+ \| [^|]+ \| \*\*([\d.]+)\*\* \| ≤ ([\d.]+) \| ([^|]+) \|$/gm)] : [];
  if (!block || rows.length === 0) return [notMeasured(LINE6, 'both kinds', 'npm run bench:allocation')];
  return rows.map(([, scenario, raw, got, express, gateway, limit, verdict]) =>
    row({ line: LINE6, scenario: scenario!, gateway: `${gateway} KB`, limit: `≤ ${limit} KB`, verdict: verdict!.trim(), express: `${express} KB`, got: `${got} KB`, raw: `${raw} KB`, from: provenance('ALLOCATION', block) }),
  );
}

function tracing(read: ReadBlock): BudgetRow[] {
  const block = read('TRACING-CPU');
  const bullets = block ? [...block.matchAll(/^- Issue 40, line 7, (non-streamed|streamed, 20 events): tracing on (\S+) \(([^)]*)\) over off: (.+)$/gm)] : [];
  if (!block || bullets.length === 0) return [notMeasured(LINE7, KINDS.join(' / '), 'npm run bench:tracing-cpu', block ? ': the last run predates its verdict' : '')];
  const load = /under load/i.test(block) ? ' (under load)' : '';
  return bullets.map(([, scenario, share, micros, verdict]) =>
    row({ line: LINE7, scenario: scenario!, gateway: `${share} (${micros})`, limit: '≤ +25%', verdict: verdict!.trim(), from: `${provenance('TRACING-CPU', block)}${load}` }),
  );
}

/** Lines 2, 4, 5, 6 and 7, from their blocks, in the budget's order. */
export function carriedRows(read: ReadBlock): { line2: BudgetRow[]; rest: BudgetRow[] } {
  return { line2: instructions(read), rest: [...latency(read), ...streams(read), ...allocation(read), ...tracing(read)] };
}
