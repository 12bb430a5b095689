import type { DialectDefaults } from '../dialect.js';

/**
 * OpenAI-compatible providers take the key as a bearer token and need no header of their own. Gated: the
 * Responses API's built-in tools (web search, file search, code interpreter, …), which run and bill at the provider,
 * in a native /v1/responses body (models marked `api: responses`); a service tier that bills more (`priority`,
 * `scale`); the search models' web searches (`web_search_options`), which the provider bills per call.
 */
export const openaiDefaults: DialectDefaults = { auth: 'bearer', headers: {}, gatedFields: ['built_in_tools', 'service_tier', 'web_search_options'], kinds: ['embedding'] };
