import { execFileSync } from 'node:child_process';
import { basename, dirname } from 'node:path';
import type { RouteTables } from '../src/generated/types/route-tables.js';
import { compileRoutes, type CompileResult } from './routes/compile-routes.js';
import { readRoutesFile } from './routes/load-routes.js';
import { formatProblem, type Problem } from './routes/problem.js';
import { routesFile } from './routes-path.js';

/**
 * Reads and compiles the routes file (the one named on the command line, else ROUTES_FILE, else ./routes.yaml).
 * When it cannot be read or does not compile, says why on stderr (one line per problem, never a stack trace) and exits 1.
 */
export function compileRoutesFileOrExit(argument?: string): { fileName: string; tables: RouteTables; locate: Extract<CompileResult, { ok: true }>['locate'] } {
  const { path, label: fileName } = routesFile(argument);
  let text: string;
  try {
    text = readRoutesFile(path);
  } catch (error) {
    process.stderr.write(`${fileName}: cannot read: ${readFailure(error)}\n`);
    process.exit(1);
  }
  const previousText = committedVersion(path);
  const result = compileRoutes(text, previousText === undefined ? {} : { previousText });
  if (!result.ok) {
    reportProblems(fileName, result.problems);
    process.exit(1);
  }
  for (const warning of result.warnings) process.stderr.write(`${formatProblem(fileName, warning)}\n`);
  return { fileName, tables: result.tables, locate: result.locate };
}

function reportProblems(fileName: string, problems: readonly Problem[]): void {
  for (const problem of problems) process.stderr.write(`${formatProblem(fileName, problem)}\n`);
  process.stderr.write(`${fileName}: ${problems.length} problem${problems.length === 1 ? '' : 's'}; nothing generated\n`);
}

/** Node's message without the syscall and path it appends (the line already starts with the file name). */
function readFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/, \w+(?: '.*')?$/s, '');
}

/** The file as last committed (git), if it is in a repository: it tells which models are new. Quietly nothing otherwise. */
function committedVersion(path: string): string | undefined {
  try {
    return execFileSync('git', ['show', `HEAD:./${basename(path)}`], { cwd: dirname(path), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000, maxBuffer: 16 * 1024 * 1024 });
  } catch {
    return undefined;
  }
}
