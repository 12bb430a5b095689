import type { DialectName } from '../generated/types/route-tables.js';
import { anthropicDefaults } from './anthropic/defaults.js';
import { openaiDefaults } from './openai/defaults.js';

/** How a provider's key is sent: `Authorization: Bearer <key>`, or the raw key under a header of its own. */
export type AuthScheme = 'bearer' | { readonly header: string };

/** What a provider of a dialect sends unless its routes.yaml entry says otherwise. Plain data: the routes compiler applies it. */
export interface DialectDefaults {
  readonly auth: AuthScheme;
  /** Lower-case names; a routes.yaml `headers` entry of the same name (any case) replaces one. */
  readonly headers: Readonly<Record<string, string>>;
}

/** Every dialect's defaults; a dialect added to the schema without them fails to compile. */
export const DIALECT_DEFAULTS: Readonly<Record<DialectName, DialectDefaults>> = {
  anthropic: anthropicDefaults,
  openai: openaiDefaults,
};
