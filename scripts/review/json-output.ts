import type { Change, Review } from './change.js';

/** `--json`: exactly one object, `{"breaking": [...], "behaviour": [...], "safe": [...]}`, items without their section. */
export function reviewJson(review: Review): string {
  const items = (changes: readonly Change[]) => changes.map(({ severity: _section, ...item }) => item);
  return `${JSON.stringify({ breaking: items(review.breaking), behaviour: items(review.behaviour), safe: items(review.safe) }, null, 2)}\n`;
}
