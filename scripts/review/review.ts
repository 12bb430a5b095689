// `npm run review -- OLD NEW`, `--base REF [NEW]` or `--base-file OLD [NEW]`: what a routes.yaml change does to callers.
// NEW defaults to ROUTES_FILE, else routes.yaml. --base reads NEW's own path at REF in the git repository that
// holds NEW (yours, when ROUTES_FILE is outside this tree); --base-file takes the old side from any file.
// Markdown (or --json) on stdout. Exit 0: nothing breaking; 1: something is; 2: a side does not compile or cannot be read.
import { reviewChange } from './classify.js';
import { compileSide, readGitSide, readSide, SideError } from './load-sides.js';
import { reviewJson } from './json-output.js';
import { reviewMarkdown } from './markdown-output.js';
import { routesFile } from '../routes-path.js';

const USAGE = 'usage: npm run --silent review -- [--json] OLD NEW | [--json] --base REF [NEW] | [--json] --base-file OLD [NEW]   (NEW defaults to ROUTES_FILE, else routes.yaml)';

function main(args: readonly string[]): number {
  const json = args.includes('--json');
  const rest = args.filter((arg) => arg !== '--json');
  let base: string | undefined;
  let baseFile: string | undefined;
  for (const option of ['--base', '--base-file'] as const) {
    const at = rest.indexOf(option);
    if (at === -1) continue;
    const value = rest[at + 1];
    if (value === undefined) return usage(option === '--base' ? '--base needs a git revision' : '--base-file needs a file');
    if (option === '--base') base = value;
    else baseFile = value;
    rest.splice(at, 2);
  }
  if (base !== undefined && baseFile !== undefined) return usage('give --base or --base-file, not both');
  const unknown = rest.find((arg) => arg.startsWith('--'));
  if (unknown) return usage(`unknown option ${unknown}`);
  const oneSideGiven = base !== undefined || baseFile !== undefined;
  if (oneSideGiven ? rest.length > 1 : rest.length !== 2) return usage('give two files, or --base REF / --base-file OLD and at most one file');
  const next = routesFile(oneSideGiven ? rest[0] : rest[1]);
  try {
    const old = compileSide(base !== undefined ? readGitSide(base, next) : readSide(routesFile(baseFile ?? rest[0])), 'old');
    const now = compileSide(readSide(next), 'new');
    const review = reviewChange(old.tables, now.tables, now.lineOf);
    process.stdout.write(json ? reviewJson(review) : reviewMarkdown(review, { old: old.label, new: now.label }));
    return review.breaking.length > 0 ? 1 : 0;
  } catch (error) {
    // Anything unexpected is exit 2 as well: exit 1 would tell CI "breaking" when nothing was compared.
    const lines = error instanceof SideError ? error.lines : [`review: failed: ${error instanceof Error ? error.message : String(error)}`];
    for (const line of lines) process.stderr.write(`${line}\n`);
    return 2;
  }
}

function usage(problem: string): number {
  process.stderr.write(`review: ${problem}\n${USAGE}\n`);
  return 2;
}

process.exitCode = main(process.argv.slice(2));
