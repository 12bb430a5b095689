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

/**
 * Every file (or symbolic link) under `dir`, relative to it, and its folders, deepest first; none when `dir` does not
 * exist yet (the first build). A link is never followed: a link in dist/ to a folder elsewhere must not make this
 * walk, and the removal after it, reach outside dist/ (readdirSync's own `recursive` follows links to folders).
 */
function walk(dir: string): { files: string[]; folders: string[] } {
  const files: string[] = [];
  const folders: string[] = [];
  const visit = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        visit(path);
        folders.push(path);
      } else files.push(relative(dir, path));
    }
  };
  if (existsSync(dir)) visit(dir);
  return { files, folders };
}

/** Removes every file in `distDir` that no source in `srcDir` compiles to, then the folders left empty; returns the files removed. */
export function pruneStaleOutputs(srcDir: string, distDir: string): string[] {
  const expected = new Set(walk(srcDir).files.flatMap(outputsOf));
  const { files, folders } = walk(distDir);
  const stale = files.filter((file) => !expected.has(file));
  for (const file of stale) rmSync(join(distDir, file));
  // Deepest first (as walked), so that a folder whose only content was an emptied folder goes too.
  for (const folder of folders) if (readdirSync(folder).length === 0) rmdirSync(folder);
  return stale;
}
