// What every benchmark report shares: the machine and the build it measured, the blocks it owns in
// BENCHMARKS.md, and the transpiling of a standalone TypeScript target to plain JavaScript.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const SERVER = join(REPO, 'dist', 'server.js');
const HERE = fileURLToPath(new URL('./', import.meta.url));
export const BENCHMARKS_MD = join(REPO, 'BENCHMARKS.md');

/** Builds dist/ when it is missing, and says so when src/ changed after it (dist/ is measured as it is). */
export function ensureBuilt(tool: string): void {
  if (!existsSync(SERVER)) {
    process.stderr.write(`${tool}: dist/server.js is missing; running \`npm run build\` first\n`);
    execFileSync('npm', ['run', 'build'], { cwd: REPO, stdio: 'inherit' });
  }
  const newest = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true }).reduce((max, entry) => {
      const path = join(dir, entry.name);
      return Math.max(max, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
    }, 0);
  if (existsSync(join(REPO, 'src')) && newest(join(REPO, 'src')) > statSync(SERVER).mtimeMs) {
    process.stderr.write(`${tool}: note: src/ has changes newer than dist/; measuring dist/ as it is (run \`npm run build\` to include them)\n`);
  }
}

/** The machine lines of a report; `tools` names what measured (e.g. `autocannon 9.0.0`). */
export function describeMachine(tools: string): string[] {
  const cpus = os.cpus();
  const load = os.loadavg().map((n) => n.toFixed(2)).join(', ');
  return [
    `- CPU: ${cpus[0]?.model.trim() ?? 'unknown'}, ${cpus.length} cores (${os.arch()}), ${(os.totalmem() / 1024 / 1024).toFixed(0)} MiB RAM`,
    `- OS: ${os.type()} ${os.release()}; Node ${process.version}; ${tools}`,
    `- Date: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; load average at start: ${load}`,
    `- Measured: ${describeBuild()}`,
  ];
}

export function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

/** Which gateway was measured: dist/ as it was (a hash of its .js files), and the commit it sits on. */
function describeBuild(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.js')) hash.update(path.slice(REPO.length)).update(readFileSync(path));
    }
  };
  walk(join(REPO, 'dist'));
  let commit = 'no git';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: REPO, encoding: 'utf8' }).trim();
    if (dirty) commit += ` + uncommitted changes in src/`;
  } catch {
    // not a git checkout
  }
  const built = statSync(SERVER).mtime.toISOString().replace(/\.\d+Z$/, 'Z');
  return `dist/ sha256 ${hash.digest('hex').slice(0, 12)} (dist/server.js built ${built}), on commit ${commit}`;
}

/**
 * Blocks written elsewhere than BENCHMARKS.md: the Method describes the benches, so it lives with their docs; LATENCY
 * and ALLOCATION too, while BENCHMARKS.md is at its length limit (test/docs/docs-links.test.ts).
 */
const BLOCK_FILES: Readonly<Record<string, string>> = {
  METHOD: join(REPO, 'docs', 'performance.md'),
  LATENCY: join(REPO, 'docs', 'performance.md'),
  ALLOCATION: join(REPO, 'docs', 'performance.md'),
};

/** The file that holds a block. */
export function blockFile(name: string): string {
  return BLOCK_FILES[name] ?? BENCHMARKS_MD;
}

/**
 * Replaces the block between `<!-- BENCH:<name>:BEGIN -->` and its END in its file (BENCHMARKS.md unless
 * BLOCK_FILES says otherwise); a block not there yet goes before "## Optimisations", else at the end (and a
 * missing BENCHMARKS.md starts from `template`).
 */
export function writeBlock(name: string, content: string, template: string): void {
  const file = blockFile(name);
  const begin = `<!-- BENCH:${name}:BEGIN -->`;
  const end = `<!-- BENCH:${name}:END -->`;
  let text = existsSync(file) ? readFileSync(file, 'utf8') : file === BENCHMARKS_MD ? template : '';
  const block = `${begin}\n${content.trimEnd()}\n${end}`;
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from !== -1 && to > from) text = text.slice(0, from) + block + text.slice(to + end.length);
  else {
    const optimisations = text.indexOf('## Optimisations');
    text = optimisations === -1 ? `${text.trimEnd()}\n\n${block}\n` : `${text.slice(0, optimisations)}${block}\n\n${text.slice(optimisations)}`;
  }
  writeFileSync(file, text);
}

export function readBlock(name: string): string | null {
  const file = blockFile(name);
  if (!existsSync(file)) return null;
  const text = readFileSync(file, 'utf8');
  const from = text.indexOf(`<!-- BENCH:${name}:BEGIN -->`);
  const to = text.indexOf(`<!-- BENCH:${name}:END -->`);
  return from !== -1 && to > from ? text.slice(from, to) : null;
}

/** Transpiles a standalone TypeScript file of this folder into `dir` as plain JavaScript, so it runs without a loader. */
export function transpile(file: string, dir: string): string {
  const source = readFileSync(join(HERE, file), 'utf8');
  const output = ts.transpileModule(source, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext }, fileName: file });
  const target = join(dir, file.replace(/\.ts$/, '.mjs'));
  writeFileSync(target, output.outputText);
  return target;
}
