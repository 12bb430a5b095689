import type { DialectName } from '../generated/types/route-tables.js';
import { anthropicDialect } from './anthropic/index.js';
import { bedrockDialect } from './bedrock/index.js';
import { geminiDialect } from './gemini/index.js';
import type { Dialect } from './dialect.js';
import { openaiDialect } from './openai/index.js';

/** Every dialect routes.yaml may name; a name added to the schema without an implementation fails to compile. */
export const DIALECTS: Readonly<Record<DialectName, Dialect>> = {
  anthropic: anthropicDialect,
  bedrock: bedrockDialect,
  gemini: geminiDialect,
  openai: openaiDialect,
};
