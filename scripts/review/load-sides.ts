import { execFileSync } from 'node:child_process';
import { basename, dirname } from 'node:path';
import type { RouteTables } from '../../src/generated/types/route-tables.js';
import { compileRoutes } from '../routes/compile-routes.js';
import { readRoutesFile } from '../routes/load-routes.js';
import { formatProblem } from '../routes/problem.js';
import { routesFile, type RoutesFile } from '../routes-path.js';
import type { LineOf } from './change.js';

/** One of the two files, compiled by the same compiler as `npm run build`. */
export interface Side {
  /** How messages name it: the path, or `REF:routes.yaml` for the git side. */
  readonly label: string;
  readonly tables: RouteTables;
  readonly lineOf: LineOf;
}

/** Why a side could not be compared: the lines to print on stderr (exit 2). */
export class SideError extends Error {
  constructor(readonly lines: readonly string[]) {
    super(lines.join('\n'));
  }
}

/** Reads a file (of the working tree, or anywhere ROUTES_FILE or --base-file names); a path is named relative to here. */
export function readSide(file: RoutesFile | string): { label: string; text: string } {
  const { path, label } = typeof file === 'string' ? routesFile(file) : file;
  try {
    return { label, text: readRoutesFile(path) };
  } catch (error) {
    const message = error instanceof Error ? error.message.replace(/, \w+(?: '.*')?$/s, '') : String(error);
    throw new SideError([`${label}: cannot read: ${message}`]);
  }
}

/** `git show REF:./<file>` run in the file's folder: the same path as NEW, as committed at REF in the repository that holds it. */
export function readGitSide(ref: string, { path, label: name }: RoutesFile): { label: string; text: string } {
  const label = `${ref}:${name}`;
  if (ref.startsWith('-')) throw new SideError([`--base ${ref}: not a git revision`]);
  try {
    const text = execFileSync('git', ['show', `${ref}:./${basename(path)}`], {
      cwd: dirname(path) || '.',
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    });
    return { label, text };
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr;
    const reason = typeof stderr === 'string' && stderr.trim() !== '' ? stderr.trim().split('\n')[0] : error instanceof Error ? error.message : String(error);
    throw new SideError([`${label}: cannot read with git: ${reason}`]);
  }
}

/** Compiles one side; a file that does not compile is reported with the compiler's own file:line:col lines. */
export function compileSide(source: { label: string; text: string }, which: 'old' | 'new'): Side {
  const result = compileRoutes(source.text);
  if (!result.ok) {
    const lines = result.problems.map((problem) => formatProblem(source.label, problem));
    const count = `${result.problems.length} problem${result.problems.length === 1 ? '' : 's'}`;
    throw new SideError([...lines, `${source.label}: ${count}; the ${which} side does not compile, nothing compared`]);
  }
  return { label: source.label, tables: result.tables, lineOf: (path) => result.locate(path, 'key').line };
}
