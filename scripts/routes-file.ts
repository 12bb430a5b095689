import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { compileRoutes, type CompileResult } from './routes/compile-routes.js';
import { formatProblem, type Problem } from './routes/problem.js';

/** Reads and compiles the routes file: the one named on the command line, else ./routes.yaml. */
export function readRoutesFile(path = 'routes.yaml'): { fileName: string; result: CompileResult } {
  const fileName = relative(process.cwd(), path) || path;
  return { fileName, result: compileRoutes(readFileSync(path, 'utf8')) };
}

export function reportProblems(fileName: string, problems: readonly Problem[]): void {
  for (const problem of problems) process.stderr.write(`${formatProblem(fileName, problem)}\n`);
  process.stderr.write(`${fileName}: ${problems.length} problem${problems.length === 1 ? '' : 's'}; nothing generated\n`);
}
