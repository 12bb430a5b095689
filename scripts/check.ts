// `npm run check`: validate routes.yaml and report; generates nothing. Exit 0 when clean, 1 otherwise.
import { compileRoutesFileOrExit } from './routes-file.js';

const { fileName, tables } = compileRoutesFileOrExit(process.argv[2]);
console.log(`${fileName}: OK (${Object.keys(tables.models).length} models, ${Object.keys(tables.providers).length} providers)`);
