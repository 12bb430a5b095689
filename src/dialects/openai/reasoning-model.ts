import { gatewayError } from '../../wire/gateway-error.js';
import type { TopLevelScan } from '../../wire/json-top-level.js';
import type { TopLevelEdit } from '../../wire/json-top-level-edit.js';

/** Sampling fields a reasoning model takes at their default only: OpenAI refuses any other value. */
const DEFAULT_ONLY = ['temperature', 'top_p'] as const;

/**
 * The edits that let a client which does not know a reasoning model by name (LangChain sends `max_tokens` and
 * `temperature` to `openai/o3`) reach it: OpenAI refuses `max_tokens` on these models, and `temperature` or
 * `top_p` other than 1. `max_tokens` goes as `max_completion_tokens`; `temperature`/`top_p` of 1 (or null) ask for
 * nothing and are dropped; another value is refused here with a 400 naming the field, as OpenAI would, more clearly.
 * Every copy of a duplicated key is read, whichever one the provider keeps.
 */
export function reasoningModelEdits(text: string, scan: TopLevelScan): Map<string, TopLevelEdit> {
  const edits = new Map<string, TopLevelEdit>();
  const copies = (key: string) => scan.keys.flatMap((each, i) => (each === key ? [text.slice(scan.values[i]!.start, scan.values[i]!.end)] : []));
  for (const field of DEFAULT_ONLY) {
    const values = copies(field);
    if (values.length === 0) continue;
    const other = values.find((json) => json !== 'null' && JSON.parse(json) !== 1);
    if (other !== undefined) {
      throw gatewayError(
        'unsupported_parameter',
        `'${field}' ${other.slice(0, 32)} is not supported for this model: a reasoning model takes only the default (1); leave it out or send 1.`,
        { param: field },
      );
    }
    edits.set(field, undefined);
  }
  const maxTokens = copies('max_tokens').filter((json) => json !== 'null');
  if (copies('max_tokens').length === 0) return edits;
  edits.set('max_tokens', undefined);
  const limit = maxTokens.at(-1); // the copy a JSON parser keeps
  if (limit === undefined) return edits;
  const completionTokens = copies('max_completion_tokens').filter((json) => json !== 'null');
  if (completionTokens.length === 0) {
    edits.set('max_completion_tokens', limit);
  } else if (completionTokens.some((json) => JSON.parse(json) !== JSON.parse(limit))) {
    throw gatewayError(
      'invalid_request',
      `'max_tokens' and 'max_completion_tokens' are both set, to different values: a reasoning model takes max_completion_tokens only; send one.`,
      { param: 'max_tokens', code: 'invalid_value' },
    );
  }
  return edits;
}
