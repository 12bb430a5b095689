import type { RouteTables } from '../../src/generated/types/route-tables.js';
import { generatedHeader, writeGenerated } from './generated-dir.js';

/** src/generated/routes.ts: the compiled tables as one readonly constant, stamped with the source hash. */
export function emitRoutes(tables: RouteTables, version: string): void {
  writeGenerated(
    'routes.ts',
    `${generatedHeader(`routes.yaml (sha256 ${tables.sourceSha256})`)}` +
      `import type { RouteTables } from './types/route-tables.js';\n\n` +
      `/** package.json version of the build. */\n` +
      `export const GATEWAY_VERSION = ${JSON.stringify(version)};\n\n` +
      `export const routeTables = ${JSON.stringify(tables, null, 2)} as const satisfies RouteTables;\n`,
  );
}
