import type { DialectDefaults } from '../dialect.js';

/** OpenAI-compatible providers take the key as a bearer token and need no header of their own. */
export const openaiDefaults: DialectDefaults = { auth: 'bearer', headers: {}, gatedFields: [] };
