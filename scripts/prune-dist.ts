// `npm run build`, between steps 3 and 4: dist/ holds only what tsc makes of today's src/. A module moved or removed
// in src/ would otherwise stay in dist/ from an older build (dist/engine/ did, after the layout move), where a
// stale import could still find it and a reviewer would read code that no longer exists.
import { existsSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

/** What tsc (rootDir src, outDir dist, sourceMap on, no declarations) writes for one source file. */
function outputsOf(source: string): string[] {
  if (!source.endsWith('.ts') || source.endsWith('.d.ts')) return [];
  const base = source.slice(0, -'.ts'.length);
  return [`${base}.js`, `${base}.js.map`];
}

/** Every entry under `dir`, or none when it does not exist yet (the first build). */
function entriesUnder(dir: string) {
  return existsSync(dir) ? readdirSync(dir, { withFileTypes: true, recursive: true }) : [];
}

function filesUnder(dir: string): string[] {
  return entriesUnder(dir)
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

/** Removes every file in `distDir` that no source in `srcDir` compiles to, then the folders left empty; returns the files removed. */
export function pruneStaleOutputs(srcDir: string, distDir: string): string[] {
  const expected = new Set(filesUnder(srcDir).flatMap(outputsOf));
  const stale = filesUnder(distDir).filter((file) => !expected.has(file));
  for (const file of stale) rmSync(join(distDir, file));
  // Deepest first, so that a folder whose only content was an emptied folder goes too.
  const folders = entriesUnder(distDir)
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort((a, b) => b.length - a.length);
  for (const folder of folders) if (readdirSync(folder).length === 0) rmdirSync(folder);
  return stale;
}
