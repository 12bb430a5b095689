// `npm run build`, steps 1-3: check routes.yaml, generate types, emit tables and the request validator. tsc is step 4.
import { readFileSync } from 'node:fs';
import { emitRequestValidator } from './emit/emit-request-validator.js';
import { emitRoutes } from './emit/emit-routes.js';
import { emitTypes } from './emit/emit-types.js';
import { compileRoutesFileOrExit } from './routes-file.js';

const { tables } = compileRoutesFileOrExit(process.argv[2]);
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
await emitTypes();
emitRequestValidator();
emitRoutes(tables, version);
