import type { DialectName } from '../generated/types/route-tables.js';
import type { Dialect } from './dialect.js';
import { openaiDialect } from './openai/index.js';

/** Stands in until the anthropic dialect's translation is wired in: every call is a clear 500, never a wrong request. */
const notYetWired: Dialect = {
  buildRequest() {
    throw new Error('the anthropic dialect is not wired in yet');
  },
  readResponse: () => undefined,
  readError: () => ({ message: null, code: null }),
  createStreamReader() {
    throw new Error('the anthropic dialect is not wired in yet');
  },
};

/** Every dialect routes.yaml may name; a name added to the schema without an implementation fails to compile. */
export const DIALECTS: Readonly<Record<DialectName, Dialect>> = {
  anthropic: notYetWired,
  openai: openaiDialect,
};
