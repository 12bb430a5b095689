type Report = (path: (string | number)[], at: 'key' | 'value', message: string) => void;

/**
 * A model's thinking keys against its provider's dialect: `levels` and the gemini range keys only on a
 * gemini-dialect model, `adaptive` never there, each range key only with the reasoning it describes.
 */
export function checkThinking(model: string, entry: Record<string, unknown>, dialect: unknown, report: Report): void {
  const reasoning = entry['reasoning'];
  const gemini = dialect === 'gemini';
  if (reasoning === 'levels' && !gemini) report(['models', model, 'reasoning'], 'value', 'levels is for models of a gemini-dialect provider (Gemini 3.x thinkingLevel)');
  if (reasoning === 'adaptive' && gemini) report(['models', model, 'reasoning'], 'value', 'adaptive is for anthropic-dialect models: a gemini model takes budget (2.5) or levels (3.x)');
  if (reasoning === 'adaptive' && dialect === 'bedrock') report(['models', model, 'reasoning'], 'value', "adaptive has no Converse form: a bedrock model takes none or budget (Claude's extended thinking)");
  // Thinking needs maxTokens sent with it, above its budget: never a guessed one.
  if (reasoning === 'budget' && dialect === 'bedrock' && entry['max_output_tokens'] === undefined) {
    report(['models', model, 'reasoning'], 'key', 'needs max_output_tokens on a bedrock model (thinking is sent with maxTokens above its budget)');
  }
  const budget = entry['thinking_budget'];
  if (budget !== undefined) {
    if (!gemini || reasoning !== 'budget') report(['models', model, 'thinking_budget'], 'key', 'needs reasoning: budget on a model of a gemini-dialect provider');
    const range = budget !== null && typeof budget === 'object' ? (budget as Record<string, unknown>) : {};
    if (typeof range['min'] === 'number' && typeof range['max'] === 'number' && range['min'] > range['max']) {
      report(['models', model, 'thinking_budget', 'min'], 'value', `is above max (${range['max']})`);
    }
  }
  if (entry['reasoning_levels'] !== undefined && (!gemini || reasoning !== 'levels')) {
    report(['models', model, 'reasoning_levels'], 'key', 'needs reasoning: levels on a model of a gemini-dialect provider');
  }
}
