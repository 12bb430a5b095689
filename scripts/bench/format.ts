// How `npm run bench` writes its numbers: MiB, integers with separators, fixed digits, signed differences.

export const mib = (bytes: number) => bytes / 1024 / 1024;
export const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—');
export const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : '—');
export const ms = (n: number) => fixed(n, n < 10 ? 2 : 1);

/** `+0.12` / `−0.12` (a real minus sign), two decimals by default. */
export function signed(n: number, digits = 2): string {
  return `${n >= 0 ? '+' : '−'}${Math.abs(n).toFixed(digits)}`;
}
