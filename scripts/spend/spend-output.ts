import type { CallerSpendRow, SpendReport } from './read-spend.js';

/** USD to the hundred-millionth, as the log lines and the gauges carry it. */
const usd = (figure: number): number => Math.round(figure * 1e8) / 1e8;

interface Period {
  readonly spentUsd: number;
  readonly budgetUsd: number | null;
  /** Budget minus spend: negative when requests in flight at the limit took it past (docs/callers.md, reservations). */
  readonly leftUsd: number | null;
}

function period(figures: CallerSpendRow['day']): Period {
  return { spentUsd: usd(figures.spentUsd), budgetUsd: figures.budgetUsd, leftUsd: figures.budgetUsd === null ? null : usd(figures.budgetUsd - figures.spentUsd) };
}

export function spendJson(report: SpendReport): string {
  const callers = report.callers.map((row) => ({ caller: row.caller, day: period(row.day), month: period(row.month) }));
  return `${JSON.stringify({ source: report.source, store: report.store, day: report.periods.day, month: report.periods.month, callers, unbudgeted: report.unbudgeted }, null, 2)}\n`;
}

export function spendTable(report: SpendReport): string {
  const from = report.source === 'redis' ? 'Redis (REDIS_URL)' : `the gateway's /metrics (counted in ${report.store === 'redis' ? 'Redis' : 'its memory'})`;
  const lines = [`Spend in UTC day ${report.periods.day} and month ${report.periods.month}, from ${from}`, ''];
  const money = (figure: number | null) => (figure === null ? '-' : figure.toFixed(4));
  const rows = [['caller', 'today', 'day budget', 'day left', 'this month', 'month budget', 'month left']];
  for (const row of report.callers) {
    const day = period(row.day);
    const month = period(row.month);
    rows.push([row.caller, money(day.spentUsd), money(day.budgetUsd), money(day.leftUsd), money(month.spentUsd), money(month.budgetUsd), money(month.leftUsd)]);
  }
  if (report.callers.length === 0) lines.push('No caller has a budget: spend is only counted for callers with one (routes.yaml callers.*.budget).');
  else {
    const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
    for (const row of rows) lines.push(row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ').trimEnd());
    lines.push('', 'USD. left: budget minus spend (negative: requests in flight at the limit took it past).');
  }
  if (report.unbudgeted.length > 0) lines.push(`No budget, spend not counted (see gateway_cost_usd_total): ${report.unbudgeted.join(', ')}`);
  return `${lines.join('\n')}\n`;
}
