import { DIALECT_DEFAULTS } from '../../src/dialects/dialect-defaults.js';

type Report = (path: (string | number)[], at: 'key' | 'value', message: string) => void;

/** What only a chat model has: an embedding model that sets one was probably meant as a chat model. */
const CHAT_ONLY_KEYS = ['max_output_tokens', 'reasoning', 'thinking_budget', 'reasoning_levels', 'api'];

/**
 * routes.yaml `kind`: embedding only where the provider's dialect has an embeddings API (DialectDefaults.kinds),
 * no chat-only key on an embedding model, and every fallback of the model's own kind (a fallback serves the same
 * endpoint). Reported at the line that says it.
 */
export function checkKinds(models: Record<string, unknown>, providers: Record<string, unknown>, report: Report): void {
  const kindOf = (model: string) => (entryOf(models, model)['kind'] === 'embedding' ? 'embedding' : 'chat');
  for (const model of Object.keys(models)) {
    const entry = entryOf(models, model);
    if (kindOf(model) !== 'embedding') continue;
    const prefix = model.split('/')[0]!;
    if (Object.hasOwn(providers, prefix)) {
      const named = entryOf(providers, prefix)['dialect'];
      const dialect = typeof named === 'string' && Object.hasOwn(DIALECT_DEFAULTS, named) ? (named as keyof typeof DIALECT_DEFAULTS) : 'openai';
      const served = Object.entries(DIALECT_DEFAULTS).filter(([, defaults]) => defaults.kinds?.includes('embedding')).map(([name]) => name);
      if (!DIALECT_DEFAULTS[dialect].kinds?.includes('embedding')) {
        report(['models', model, 'kind'], 'value', `embedding needs a provider whose dialect has an embeddings API (${served.join(', ')}); ${JSON.stringify(prefix)} speaks ${dialect}`);
        continue;
      }
    }
    for (const key of CHAT_ONLY_KEYS) {
      if (entry[key] !== undefined) report(['models', model, key], 'key', `is for chat models; this one is kind: embedding`);
    }
  }
  for (const model of Object.keys(models)) {
    const fallback = entryOf(models, model)['fallback'];
    if (!Array.isArray(fallback)) continue;
    fallback.forEach((target: unknown, index) => {
      if (typeof target !== 'string' || !Object.hasOwn(models, target) || kindOf(target) === kindOf(model)) return;
      report(['models', model, 'fallback', index], 'value', `${JSON.stringify(target)} is a ${kindOf(target)} model; ${JSON.stringify(model)} is kind: ${kindOf(model)}, and a fallback serves the same endpoint`);
    });
  }
}

function entryOf(map: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = map[key];
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
