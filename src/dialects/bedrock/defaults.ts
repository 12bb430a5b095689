import type { DialectDefaults } from '../dialect.js';

/**
 * Amazon Bedrock signs each request with AWS Signature Version 4 (`auth: aws`, src/routing/auth/); a Bedrock API
 * key goes as `auth: bearer`. No field is gated: every field without a Converse form is refused by the translation.
 */
export const bedrockDefaults: DialectDefaults = { auth: 'aws', headers: {}, gatedFields: [] };
