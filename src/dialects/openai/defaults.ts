import type { DialectDefaults } from '../dialect.js';

/**
 * OpenAI-compatible providers take the key as a bearer token and need no header of their own. Gated: the
 * Responses API's built-in tools (web search, file search, code interpreter, …), which run and bill at the provider,
 * in a native /v1/responses body (models marked `api: responses`).
 */
export const openaiDefaults: DialectDefaults = { auth: 'bearer', headers: {}, gatedFields: ['built_in_tools'] };
