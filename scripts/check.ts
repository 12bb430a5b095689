// `npm run check`: validate routes.yaml and report; generates nothing. Exit 0 when clean, 1 otherwise.
import { readRoutesFile, reportProblems } from './routes-file.js';

const { fileName, result } = readRoutesFile(process.argv[2]);
if (!result.ok) {
  reportProblems(fileName, result.problems);
  process.exit(1);
}
console.log(`${fileName}: OK (${Object.keys(result.tables.models).length} models, ${Object.keys(result.tables.providers).length} providers)`);
