// `npm run review -- OLD NEW` or `npm run review -- --base REF [NEW]`: what a routes.yaml change does to callers.
// Markdown (or --json) on stdout. Exit 0: nothing breaking; 1: something is; 2: a side does not compile or cannot be read.
import { reviewChange } from './classify.js';
import { compileSide, readGitSide, readSide, SideError } from './load-sides.js';
import { reviewJson } from './json-output.js';
import { reviewMarkdown } from './markdown-output.js';

const USAGE = 'usage: npm run --silent review -- [--json] OLD NEW | [--json] --base REF [NEW (default routes.yaml)]';

function main(args: readonly string[]): number {
  const json = args.includes('--json');
  const rest = args.filter((arg) => arg !== '--json');
  const baseAt = rest.indexOf('--base');
  let base: string | undefined;
  if (baseAt !== -1) {
    base = rest[baseAt + 1];
    if (base === undefined) return usage('--base needs a git revision');
    rest.splice(baseAt, 2);
  }
  const unknown = rest.find((arg) => arg.startsWith('--'));
  if (unknown) return usage(`unknown option ${unknown}`);
  if (base !== undefined ? rest.length > 1 : rest.length !== 2) return usage('give two files, or --base REF and at most one file');
  const newPath = base !== undefined ? (rest[0] ?? 'routes.yaml') : rest[1]!;
  try {
    const old = compileSide(base !== undefined ? readGitSide(base, newPath) : readSide(rest[0]!), 'old');
    const next = compileSide(readSide(newPath), 'new');
    const review = reviewChange(old.tables, next.tables, next.lineOf);
    process.stdout.write(json ? reviewJson(review) : reviewMarkdown(review, { old: old.label, new: next.label }));
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
