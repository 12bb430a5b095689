import type { PriceTable, RouteTables } from '../../src/generated/types/route-tables.js';
import { costUsd } from '../../src/observe/cost.js';
import type { Change, ItemTraffic, Review } from './change.js';

/** Requests (and their cost) over the window for one routing string and one caller. */
export interface TrafficCell {
  readonly model: string;
  readonly caller: string;
  readonly requests: number;
  /** USD these requests cost (gateway_cost_usd_total, the log lines' cost_usd) at the price of their time. */
  readonly costUsd: number;
}

/** Tokens over the window for one routing string: what a price change would have charged differently. */
export interface ModelTokens {
  prompt: number;
  cached: number;
  completion: number;
}

/** What a traffic source gives: requests by routing string and caller, tokens by routing string. */
export interface TrafficData {
  /** `Prometheus https://prom.example` or `2 log files (1,234 request lines)`: for the report's header. */
  readonly source: string;
  readonly cells: readonly TrafficCell[];
  readonly tokens: ReadonlyMap<string, ModelTokens>;
}

/** `7d`, `24h`, `90m`, `1w` as Prometheus writes a range; milliseconds and a label for the report (`7 d`). */
export function parseWindow(text: string): { ms: number; promql: string; label: string } | null {
  const match = /^(\d{1,5})([mhdw])$/.exec(text);
  if (!match) return null;
  const count = Number(match[1]);
  const unit = match[2] as 'm' | 'h' | 'd' | 'w';
  if (count === 0) return null;
  const ms = count * { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[unit];
  return { ms, promql: `${count}${unit}`, label: `${count} ${unit === 'm' ? 'min' : unit}` };
}

/**
 * Each item with the traffic it touches: a routing string's requests (and with a caller, that caller's of it), a
 * caller's requests, a provider's (through its routing strings on either side), and for an item that names none
 * (error rules, max_attempts, callers declared) every request. A price change also gets the spend it would have moved.
 */
export function withTraffic(review: Review, data: TrafficData, old: RouteTables, next: RouteTables): Review {
  const providerOf = (model: string) => old.models[model]?.provider ?? next.models[model]?.provider;
  const add = (change: Change): Change => {
    const touched = data.cells.filter(touches(change, providerOf));
    const callers = new Map<string, number>();
    for (const cell of touched) callers.set(cell.caller, (callers.get(cell.caller) ?? 0) + cell.requests);
    const sorted = [...callers].filter(([, requests]) => requests > 0).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    const traffic: ItemTraffic = {
      requests: sorted.reduce((sum, [, requests]) => sum + requests, 0),
      callers: Object.fromEntries(sorted),
      ...(change.kind === 'price_changed' && change.model
        ? { spendUsd: Math.round(touched.reduce((sum, cell) => sum + cell.costUsd, 0) * 1e8) / 1e8, spendMovedUsd: spendMoved(data.tokens.get(change.model), change.before, change.after) }
        : {}),
    };
    return { ...change, traffic };
  };
  return { breaking: review.breaking.map(add), behaviour: review.behaviour.map(add), safe: review.safe.map(add) };
}

function touches(change: Change, providerOf: (model: string) => string | undefined): (cell: TrafficCell) => boolean {
  const { model, caller, provider } = change;
  if (model !== undefined) return (cell) => cell.model === model && (caller === undefined || cell.caller === caller);
  if (caller !== undefined) return (cell) => cell.caller === caller;
  if (provider !== undefined) return (cell) => providerOf(cell.model) === provider;
  return () => true;
}

/** The window's tokens priced at the new price minus at the old (no price: nothing charged). */
function spendMoved(tokens: ModelTokens | undefined, before: unknown, after: unknown): number {
  if (!tokens) return 0;
  const usage = { prompt_tokens: tokens.prompt, completion_tokens: tokens.completion, prompt_tokens_details: { cached_tokens: tokens.cached } };
  const priced = (price: unknown) => costUsd(usage, (price ?? null) as PriceTable | null) ?? 0;
  return Math.round((priced(after) - priced(before)) * 1e8) / 1e8;
}
