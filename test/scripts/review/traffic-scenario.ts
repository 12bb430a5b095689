import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BATCH_KEY, SEARCH_KEY, callersRoutes, digestLine } from '../../helpers/callers-routes.js';

/**
 * The roster change the traffic-weighted review tests judge, and the traffic they send before it: two callers on
 * the old routes; the new routes remove `mock/gpt-4.1-mini`, take `mock/big` from batch-team, double `mock/big`'s
 * input price and repoint `mock/unpriced`, which nobody calls.
 */
export const OLD_ROUTES = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    models: [mock/big, mock/gpt-4.1-mini]
  batch-team:
    keys: [${digestLine(BATCH_KEY)}]
    models: [mock/big, mock/gpt-4.1-mini]`);

export const NEW_ROUTES = callersRoutes(`  search-team:
    keys: [${digestLine(SEARCH_KEY)}]
    models: [mock/big]
  batch-team:
    keys: [${digestLine(BATCH_KEY)}]
    models: [mock/unpriced]`)
  .replace('  mock/gpt-4.1-mini: { price: { input_per_mtok: 0.40, output_per_mtok: 1.60, cached_input_per_mtok: 0.10 } }\n', '')
  .replace('mock/big: { price: { input_per_mtok: 1,', 'mock/big: { price: { input_per_mtok: 2,')
  .replace('  mock/unpriced:\n', '  mock/unpriced: { upstream_model: unpriced-2 }\n');

/** Each answer's usage: 1,000 prompt and 500 completion tokens (mock/big: 0.002 USD; mock/gpt-4.1-mini: 0.0012 USD). */
export const USAGE = { prompt: 1000, completion: 500 };

/** [key, model, how many] in the order sent. */
export const TRAFFIC = [
  [SEARCH_KEY, 'mock/big', 3],
  [SEARCH_KEY, 'mock/gpt-4.1-mini', 2],
  [BATCH_KEY, 'mock/big', 2],
  [BATCH_KEY, 'mock/gpt-4.1-mini', 1],
] as const;

/** What the review must say of that traffic, item by item. */
export const EXPECTED = {
  removed: { requests: 3, callers: { 'search-team': 2, 'batch-team': 1 } },
  lost: { requests: 2, callers: { 'batch-team': 2 } },
  // Five answers of 1,000 prompt tokens at 1 USD more per million: 0.005 USD more.
  price: { requests: 5, callers: { 'search-team': 3, 'batch-team': 2 }, spendUsd: 0.01, spendMovedUsd: 0.005 },
};

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const reviewScript = join(repoRoot, 'scripts/review/review.ts');
const tsxLoader = import.meta.resolve('tsx');

/** `npm run --silent review -- ARGS` as a process. */
export function review(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', tsxLoader, reviewScript, ...args], { cwd: repoRoot, timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

export interface ReviewItem {
  readonly kind: string;
  readonly model?: string;
  readonly caller?: string;
  readonly traffic?: { requests: number; callers: Record<string, number>; spendUsd?: number; spendMovedUsd?: number };
}

/** The one item of `kind` (for `model`) in a --json review. */
export function itemOf(json: string, kind: string, model: string): ReviewItem {
  const parsed = JSON.parse(json) as Record<string, ReviewItem[]>;
  const found = Object.values(parsed).flat().filter((item) => item.kind === kind && item.model === model);
  if (found.length !== 1) throw new Error(`${found.length} items ${kind} ${model} in ${json}`);
  return found[0]!;
}
