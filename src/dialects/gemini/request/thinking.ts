import type { ReasoningMode, ThinkingBudget } from '../../../generated/types/route-tables.js';
import { invalid, unsupported } from '../../anthropic/request/json-node.js';

const PARAM = 'reasoning_effort';

/**
 * The budget each effort asks for on `budget` models (Gemini 2.5), before clamping into the model's
 * routes.yaml thinking_budget. `none` asks for 0, which clamps up to the model's minimum when it cannot
 * stop thinking.
 */
export const EFFORT_BUDGETS: Readonly<Record<string, number>> = {
  none: 0,
  minimal: 512,
  low: 1024,
  medium: 8192,
  high: 16384,
  xhigh: 24576,
  max: 32768,
};

/** The levels in order; xhigh and max stand above high, so they come to a model's highest level. */
const LEVEL_RANK: Readonly<Record<string, number>> = { minimal: 0, low: 1, medium: 2, high: 3, xhigh: 4, max: 5 };

/** What `reasoning_effort` becomes in a model's thinking. */
export interface ThinkingModel {
  readonly reasoning: ReasoningMode;
  readonly thinkingBudget?: ThinkingBudget | undefined;
  readonly reasoningLevels?: readonly string[] | undefined;
}

/**
 * `generationConfig.thinkingConfig` for the hint, as JSON text; undefined when none is asked for (the
 * model's own default). Thoughts are asked for (includeThoughts) whenever the model is told to think, so
 * they come back as reasoning_content.
 */
export function thinkingConfigOf(hint: unknown, model: ThinkingModel): string | undefined {
  if (hint === undefined || hint === null) return undefined;
  if (model.reasoning === 'none' || model.reasoning === 'adaptive') {
    if (hint === 'none') return undefined;
    throw unsupported(PARAM, `This model does not think: send reasoning_effort "none" or leave it out.`);
  }
  if (model.reasoning === 'levels') {
    const levels = model.reasoningLevels ?? ['low', 'high'];
    const level = hint === 'none' ? levels[0]! : nearestLevel(typeof hint === 'number' ? levelOfBudget(hint) : String(hint), levels);
    return `{"thinkingLevel":${JSON.stringify(level)},"includeThoughts":true}`;
  }
  const range = model.thinkingBudget ?? { min: 512, max: 24576 };
  if (typeof hint === 'number') {
    if (hint < range.min || hint > range.max) {
      throw invalid(PARAM, `Invalid '${PARAM}': this model takes a thinking budget from ${range.min} to ${range.max} tokens, not ${hint}.`);
    }
    return `{"thinkingBudget":${hint},"includeThoughts":true}`;
  }
  const budget = Math.min(Math.max(EFFORT_BUDGETS[String(hint)] ?? 0, range.min), range.max);
  return budget === 0 ? '{"thinkingBudget":0}' : `{"thinkingBudget":${budget},"includeThoughts":true}`;
}

/** The supported level nearest the asked one; between two equally near, the higher (never less thinking than asked). */
function nearestLevel(asked: string, levels: readonly string[]): string {
  const rank = LEVEL_RANK[asked] ?? LEVEL_RANK['medium']!;
  let best = levels[0]!;
  for (const level of levels) {
    if (Math.abs(LEVEL_RANK[level]! - rank) <= Math.abs(LEVEL_RANK[best]! - rank)) best = level;
  }
  return best;
}

/** An integer hint on a levels model: the highest effort whose table budget it reaches. */
function levelOfBudget(budget: number): string {
  let level = 'minimal';
  for (const name of ['minimal', 'low', 'medium', 'high']) if (budget >= EFFORT_BUDGETS[name]!) level = name;
  return level;
}
