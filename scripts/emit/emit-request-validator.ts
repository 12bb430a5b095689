import { Ajv } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { readSchema } from '../schemas.js';
import { generatedHeader, writeGenerated } from './generated-dir.js';

/**
 * The request validator as ajv standalone code, so the server compiles no schema at start-up.
 * The code must not import ajv's runtime helpers by bare path (ESM cannot resolve them), so the build fails if it does.
 */
export function emitRequestValidator(): void {
  const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true, code: { source: true, esm: true } });
  const validate = ajv.compile(readSchema('chat-completion-request.schema.json'));
  const code = standaloneCode.default(ajv, validate);
  if (/\brequire\(|from\s+["']ajv/.test(code)) {
    throw new Error('the request validator needs an ajv runtime helper; simplify schemas/chat-completion-request.schema.json');
  }
  writeGenerated(
    'validate-request.ts',
    `${generatedHeader('schemas/chat-completion-request.schema.json by ajv standalone')}// @ts-nocheck\n` +
      `import type { ErrorObject } from 'ajv';\n` +
      `import type { ChatCompletionRequest } from './types/chat-completion-request.js';\n` +
      `${code}\n` +
      `/** Type guard over the request schema; on false, \`.errors\` holds the first violation. */\n` +
      `export const validateRequest = validate as unknown as ((body: unknown) => body is ChatCompletionRequest) & { errors?: ErrorObject[] | null };\n`,
  );
}
