import { relative, resolve } from 'node:path';

/** A routes file to read, and how messages name it (`<label>:LINE:COL: …`). */
export interface RoutesFile {
  readonly path: string;
  readonly label: string;
}

/**
 * The routes file a command reads: the path on its command line, else ROUTES_FILE, else ./routes.yaml (the
 * shipped example). A relative ROUTES_FILE is taken from the directory the command was typed in (npm runs
 * scripts from the package root and says where the user was in INIT_CWD); messages name it as it was written.
 */
export function routesFile(argument: string | undefined, env: NodeJS.ProcessEnv = process.env): RoutesFile {
  if (argument !== undefined) return { path: argument, label: relative(process.cwd(), argument) || argument };
  const named = env['ROUTES_FILE'];
  if (named === undefined || named === '') return { path: 'routes.yaml', label: 'routes.yaml' };
  return { path: resolve(env['INIT_CWD'] || process.cwd(), named), label: named };
}
