// Reading the Markdown of README.md and docs/ as GitHub renders it: pages, tables, heading anchors.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** README.md, CHANGELOG.md, BENCHMARKS.md and every docs/*.md, as repo-relative paths. */
export function docPages(): string[] {
  const docs = readdirSync(join(REPO, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
  return ['README.md', 'CHANGELOG.md', 'BENCHMARKS.md', ...docs.sort()];
}

export function readPage(page: string): string {
  return readFileSync(join(REPO, page), 'utf8');
}

/** The text with fenced code blocks blanked (line count kept), so nothing quoted in code counts as Markdown. */
export function withoutCodeBlocks(text: string): string {
  let fence: string | null = null;
  return text
    .split('\n')
    .map((line) => {
      const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence === null && opener) fence = opener;
      else if (fence !== null && line.trim().startsWith(fence)) fence = null;
      else if (fence === null) return line;
      return '';
    })
    .join('\n');
}

/** GitHub's heading anchors (github-slugger): lower case, punctuation dropped, spaces to '-', repeats numbered. */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of withoutCodeBlocks(text).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const rendered = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*]/g, '');
    const base = rendered.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

export interface Table {
  header: string[];
  rows: string[][];
}

/** Every pipe table outside code blocks, cells trimmed (escaped pipes kept inside their cell). */
export function tablesOf(text: string): Table[] {
  const tables: Table[] = [];
  const lines = withoutCodeBlocks(text).split('\n');
  const cells = (line: string) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split(/(?<!\\)\|/).map((cell) => cell.trim());
  for (let i = 0; i + 1 < lines.length; i++) {
    if (!lines[i]!.trim().startsWith('|') || !/^\s*\|?\s*:?-{3,}/.test(lines[i + 1]!)) continue;
    const table: Table = { header: cells(lines[i]!), rows: [] };
    for (i += 2; i < lines.length && lines[i]!.trim().startsWith('|'); i++) table.rows.push(cells(lines[i]!));
    tables.push(table);
  }
  return tables;
}

/** The `code` spans of a cell. */
export function codeSpans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
}
