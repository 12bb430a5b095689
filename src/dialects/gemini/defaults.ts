import type { DialectDefaults } from '../dialect.js';

/**
 * The Gemini API takes its key in `x-goog-api-key`, never in the URL (where `?key=` would land in access
 * logs). Vertex AI takes an OAuth2 token instead: routes.yaml `auth: google`. No field is gated: every field
 * without a Gemini form is refused by the translation, Gemini-native ones included.
 */
export const geminiDefaults: DialectDefaults = { auth: { header: 'x-goog-api-key' }, headers: {}, gatedFields: [], kinds: ['embedding'] };
