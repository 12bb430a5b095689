import { invalid, unsupported } from './json-node.js';

/** How a model takes a thinking hint (routes.yaml `reasoning`). */
export type ReasoningKind = 'none' | 'budget' | 'adaptive';

/** Anthropic's fewest thinking tokens: a budget below it is refused upstream. */
export const MIN_THINKING_BUDGET = 1024;

/**
 * The budget each effort asks for on `budget` models, before clamping into [1024, max_tokens). Each
 * step doubles or more, so a higher effort never thinks less than a lower one under the same max_tokens.
 */
export const EFFORT_BUDGETS: Readonly<Record<string, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
  max: 65536,
};

/** `adaptive` models: the hint's string as Anthropic's `output_config.effort` level. */
const EFFORT_LEVELS: Readonly<Record<string, string>> = {
  minimal: 'low',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'xhigh',
  max: 'max',
};

/**
 * `adaptive` models: an integer hint (a token budget) as a level, by the same table read backwards:
 * the highest level whose budget the hint reaches (below 8192 → low, then medium, high from 16384,
 * xhigh from 32768, max from 65536).
 */
export function effortLevelOfBudget(budget: number): string {
  if (budget >= EFFORT_BUDGETS['max']!) return 'max';
  if (budget >= EFFORT_BUDGETS['xhigh']!) return 'xhigh';
  if (budget >= EFFORT_BUDGETS['high']!) return 'high';
  if (budget >= EFFORT_BUDGETS['medium']!) return 'medium';
  return 'low';
}

/** What the hint adds to the Anthropic body: `thinking`, and the `output_config.effort` level (encoded JSON). */
export interface ReasoningFields {
  readonly thinking?: string;
  readonly effort?: string;
}

const PARAM = 'reasoning_effort';

/** `reasoning_effort` (absent, a level, or a token budget) for a model of this kind and this max_tokens. */
export function reasoningFields(hint: unknown, kind: ReasoningKind, maxTokens: number): ReasoningFields {
  if (hint === undefined || hint === null || hint === 'none') return {};
  if (typeof hint !== 'string' && !(typeof hint === 'number' && Number.isInteger(hint) && hint > 0)) {
    throw invalid(PARAM, `Invalid '${PARAM}': expected a level (none, minimal, low, medium, high, xhigh, max) or a positive integer token budget.`);
  }
  if (typeof hint === 'string' && EFFORT_LEVELS[hint] === undefined) {
    throw invalid(PARAM, `Invalid '${PARAM}': expected a level (none, minimal, low, medium, high, xhigh, max) or a positive integer token budget.`);
  }
  if (kind === 'none') throw unsupported(PARAM, `This model does not think: send reasoning_effort "none" or leave it out.`);
  if (kind === 'adaptive') {
    const level = typeof hint === 'string' ? EFFORT_LEVELS[hint]! : effortLevelOfBudget(hint);
    return { thinking: '{"type":"adaptive"}', effort: JSON.stringify(level) };
  }
  return { thinking: `{"type":"enabled","budget_tokens":${budgetOf(hint, maxTokens)}}` };
}

/** A `budget` model's thinking budget: an integer as given (it must fit), a level by the table, clamped to fit. */
function budgetOf(hint: string | number, maxTokens: number): number {
  if (typeof hint === 'number') {
    if (hint < MIN_THINKING_BUDGET || hint >= maxTokens) {
      throw invalid(PARAM, `Invalid '${PARAM}': a thinking budget of ${hint} tokens must be at least ${MIN_THINKING_BUDGET} and below max_tokens (${maxTokens}).`);
    }
    return hint;
  }
  if (maxTokens <= MIN_THINKING_BUDGET) {
    throw invalid(PARAM, `Invalid '${PARAM}': thinking needs at least ${MIN_THINKING_BUDGET} tokens below max_tokens, which is ${maxTokens}; raise max_tokens or send "none".`);
  }
  return Math.min(Math.max(EFFORT_BUDGETS[hint]!, MIN_THINKING_BUDGET), maxTokens - 1);
}
