import type { TopLevelScan } from '../../wire/json-top-level.js';
import { gatedFieldError } from '../gated.js';

/**
 * service_tier values that cannot bill more than leaving the field out: `auto` is what OpenAI assumes when it is
 * absent (the project's configured tier), `default` the standard rate, `flex` a cheaper, slower one. `priority` and
 * `scale` bill more; a value not listed here may be a tier whose price the gateway cannot know.
 */
const STANDARD_OR_CHEAPER = new Set(['auto', 'default', 'flex']);

/**
 * The gated top-level fields (openaiDefaults.gatedFields but built_in_tools, a tool type), each with why this value
 * of it needs routes.yaml's word; undefined when the value cannot cost more.
 */
const WHY = new Map<string, (json: string) => string | undefined>([
  ['service_tier', (json) => {
    const tier: unknown = JSON.parse(json); // one value of a body the engine has already parsed
    if (typeof tier === 'string' && STANDARD_OR_CHEAPER.has(tier)) return undefined;
    return `${JSON.stringify(tier).slice(0, 64)} can bill at a higher rate than the default tier ("auto", "default" and "flex" pass)`;
  }],
  ['web_search_options', () => 'the provider runs web searches and bills them'],
]);

/**
 * Refuses, naming it, a gated top-level field of a chat or native Responses body that routes.yaml allow_fields does
 * not list for this model or its provider. Reads the spans the caller's body was already scanned into (no parse
 * of the body): every copy of a duplicated key is checked, whichever one the provider keeps. `null` means not set.
 */
export function refuseGatedFields(text: string, scan: TopLevelScan, allowedFields: readonly string[]): void {
  for (let i = 0; i < scan.keys.length; i++) refuseGatedField(scan.keys[i]!, text, scan.values[i]!.start, scan.values[i]!.end, allowedFields);
}

/** The same for one entry (`field`, its value from `start` to `end` in `text`), for a walk that builds no scan. */
export function refuseGatedField(field: string, text: string, start: number, end: number, allowedFields: readonly string[]): void {
  const why = WHY.get(field);
  if (why === undefined || allowedFields.includes(field)) return;
  const json = text.slice(start, end);
  const reason = json === 'null' ? undefined : why(json);
  if (reason !== undefined) throw gatedFieldError(field, reason);
}
