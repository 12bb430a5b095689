/** One thing wrong with a routes file, at a 1-based line and column. */
export interface Problem {
  readonly line: number;
  readonly col: number;
  readonly message: string;
}

export function formatProblem(fileName: string, problem: Problem): string {
  return `${fileName}:${problem.line}:${problem.col}: ${problem.message}`;
}

/** `models."openai/gpt-4o".upstream_model`: dotted, quoting keys that are not plain identifiers; list items as `[i]`. */
export function formatPath(path: readonly (string | number)[]): string {
  return path
    .map((segment, i) => {
      if (typeof segment === 'number') return `[${segment}]`;
      const text = String(segment);
      const plain = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(text) ? text : JSON.stringify(text);
      return i === 0 ? plain : `.${plain}`;
    })
    .join('');
}

/** Problems in file order, so a reviewer reads them top to bottom. */
export function sortProblems(problems: readonly Problem[]): Problem[] {
  return [...problems].sort((a, b) => a.line - b.line || a.col - b.col);
}
