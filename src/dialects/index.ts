import type { DialectName } from '../generated/types/route-tables.js';
import type { Dialect } from './dialect.js';
import { openaiDialect } from './openai-dialect.js';

/** Every dialect routes.yaml may name; a name added to the schema without an implementation fails to compile. */
export const DIALECTS: Readonly<Record<DialectName, Dialect>> = {
  openai: openaiDialect,
};
