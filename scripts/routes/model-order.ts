/** A models: key that is out of code-point order, and the keys (in order) it belongs between. */
export interface MisplacedKey {
  readonly key: string;
  /** The in-order key it belongs right after; null when it belongs first. */
  readonly after: string | null;
  /** The in-order key it belongs right before; null when it belongs last. */
  readonly before: string | null;
}

/**
 * The fewest keys to move to put `keys` in code-point order: all but a longest run already in order
 * (the earliest such run, so of two swapped neighbours the later one is named, as the file was read).
 * Naming these, not the first descent, points at the line someone added, not at its innocent neighbour.
 */
export function misplacedKeys(keys: readonly string[], known?: ReadonlySet<string>): MisplacedKey[] {
  const sorted = [...keys].sort(codePointCompare);
  const rankOf = new Map(sorted.map((key, rank) => [key, rank]));
  const ranks = keys.map((key) => rankOf.get(key)!);
  const kept = known && keys.length <= MAX_KEYS_WEIGHED ? longestRunKeepingKnown(ranks, keys.map((key) => known.has(key))) : longestIncreasingRun(ranks);
  const keptRanks = kept.map((i) => ranks[i]!);
  const keptSet = new Set(kept);
  const misplaced: MisplacedKey[] = [];
  for (const [i, key] of keys.entries()) {
    if (keptSet.has(i)) continue;
    const slot = firstGreater(keptRanks, ranks[i]!);
    misplaced.push({ key, after: slot > 0 ? keys[kept[slot - 1]!]! : null, before: slot < kept.length ? keys[kept[slot]!]! : null });
  }
  return misplaced;
}

/** Past this many keys the O(n²) choice below is skipped (a tie then names the later key, as without a history). */
const MAX_KEYS_WEIGHED = 5000;

/**
 * Like longestIncreasingRun, but of the longest runs, one that keeps the most `known` keys (those in the last
 * committed file): two swapped neighbours are a tie the file alone cannot break, and the one just added is the
 * one to move. O(n²), fine for a roster.
 */
function longestRunKeepingKnown(values: readonly number[], known: readonly boolean[]): number[] {
  const weight = (i: number) => values.length + 1 + (known[i] ? 1 : 0);
  const runFrom = new Array<number>(values.length);
  for (let i = values.length - 1; i >= 0; i--) {
    let best = 0;
    for (let j = i + 1; j < values.length; j++) if (values[j]! > values[i]! && runFrom[j]! > best) best = runFrom[j]!;
    runFrom[i] = weight(i) + best;
  }
  const run: number[] = [];
  let need = Math.max(0, ...runFrom);
  let last = -Infinity;
  for (let i = 0; i < values.length && need > 0; i++) {
    if (runFrom[i] === need && values[i]! > last) {
      run.push(i);
      last = values[i]!;
      need -= weight(i);
    }
  }
  return run;
}

/** Indexes of the earliest longest strictly increasing subsequence, in O(n log n). */
function longestIncreasingRun(values: readonly number[]): number[] {
  // runFrom[i]: length of the longest increasing run starting at i. longestStart[len]: the largest value that
  // starts a run of length len among the positions seen so far (right to left); it decreases as len grows.
  const runFrom = new Array<number>(values.length);
  const longestStart: number[] = [];
  for (let i = values.length - 1; i >= 0; i--) {
    const value = values[i]!;
    let low = 0;
    let high = longestStart.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (longestStart[mid]! > value) low = mid + 1;
      else high = mid;
    }
    runFrom[i] = low + 1;
    if (low === longestStart.length || longestStart[low]! < value) longestStart[low] = value;
  }
  const run: number[] = [];
  let need = longestStart.length;
  let last = -Infinity;
  for (let i = 0; i < values.length && need > 0; i++) {
    if (runFrom[i] === need && values[i]! > last) {
      run.push(i);
      last = values[i]!;
      need--;
    }
  }
  return run;
}

/** The first index of ascending `values` holding more than `value`. */
function firstGreater(values: readonly number[], value: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (values[mid]! > value) high = mid;
    else low = mid + 1;
  }
  return low;
}

export function codePointCompare(a: string, b: string): number {
  const left = [...a];
  const right = [...b];
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const diff = left[i]!.codePointAt(0)! - right[i]!.codePointAt(0)!;
    if (diff !== 0) return diff;
  }
  return left.length - right.length;
}
