import type { DialectName } from '../generated/types/route-tables.js';
import { anthropicDefaults } from './anthropic/defaults.js';
import { bedrockDefaults } from './bedrock/defaults.js';
import { geminiDefaults } from './gemini/defaults.js';
import { openaiDefaults } from './openai/defaults.js';
import type { DialectDefaults } from './dialect.js';

export type { AuthScheme, DialectDefaults } from './dialect.js';

/** Every dialect's defaults; a dialect added to the schema without them fails to compile. */
export const DIALECT_DEFAULTS: Readonly<Record<DialectName, DialectDefaults>> = {
  anthropic: anthropicDefaults,
  bedrock: bedrockDefaults,
  gemini: geminiDefaults,
  openai: openaiDefaults,
};
