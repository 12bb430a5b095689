// `npm run check`: validate routes.yaml and report; generates nothing. Exit 0 when clean, 1 otherwise.
// Passed sunsets are warnings on stderr: they do not fail the check (the model is still served).
import { compileRoutesFileOrExit } from './routes-file.js';
import { formatProblem } from './routes/problem.js';
import { passedSunsets } from './routes/sunset-warnings.js';

const { fileName, tables, locate } = compileRoutesFileOrExit(process.argv[2]);
for (const warning of passedSunsets(tables, locate)) process.stderr.write(`${formatProblem(fileName, warning)}\n`);
console.log(`${fileName}: OK (${Object.keys(tables.models).length} models, ${Object.keys(tables.providers).length} providers)`);
