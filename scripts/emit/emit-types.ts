import { compile } from 'json-schema-to-typescript';
import { readSchema, schemaFiles, schemasDir } from '../schemas.js';
import { generatedHeader, writeGenerated } from './generated-dir.js';

/** One module of wire and table types per schema: src/generated/types/<name>.ts. */
export async function emitTypes(): Promise<void> {
  for (const file of schemaFiles()) {
    const schema = readSchema(file);
    const name = file.replace(/\.schema\.json$/, '');
    const source = await compile(schema as Parameters<typeof compile>[0], String(schema['title']), {
      cwd: schemasDir,
      bannerComment: generatedHeader(`schemas/${file} by json-schema-to-typescript`),
      additionalProperties: false,
      strictIndexSignatures: true,
      format: false,
    });
    writeGenerated(`types/${name}.ts`, source);
  }
}
