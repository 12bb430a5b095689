// `npm run build`, steps 1-3: check routes.yaml, generate types, emit tables and the request validator; then take out
// of dist/ what no source compiles to any more. tsc is step 4.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { emitRequestValidator } from './emit/emit-request-validator.js';
import { emitRoutes } from './emit/emit-routes.js';
import { emitTypes } from './emit/emit-types.js';
import { pruneStaleOutputs } from './prune-dist.js';
import { compileRoutesFileOrExit } from './routes-file.js';

const { tables } = compileRoutesFileOrExit(process.argv[2]);
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
await emitTypes();
emitRequestValidator();
emitRoutes(tables, version);
const pruned = pruneStaleOutputs(fileURLToPath(new URL('../src', import.meta.url)), fileURLToPath(new URL('../dist', import.meta.url)));
if (pruned.length > 0) {
  const named = pruned.slice(0, 10).join(', ') + (pruned.length > 10 ? `, and ${pruned.length - 10} more` : '');
  process.stdout.write(`build: removed ${pruned.length} file(s) from dist/ that no source compiles to any more: ${named}\n`);
}
