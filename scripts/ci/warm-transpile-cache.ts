// Loads, once, every module that many test processes load (src/, the routes compiler and review in scripts/, the
// test helpers), so tsx's transpile cache holds them before tap starts ~170 processes that would each transpile them
// again on a cold cache (a fresh CI machine). Imports only: nothing here listens, runs a command or a test.
import { readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '..', '..');
/** Files that do something when imported (a server, a command line, a test's child process): never loaded here. */
const entryPoints = /^(src\/server\.ts|scripts\/[^/]+\.ts|scripts\/(bench|soak|ci)\/.*|scripts\/review\/review\.ts|test\/process\/.*)$/;

function modules(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return modules(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !entry.name.endsWith('.test.ts') && !entryPoints.test(path) ? [path] : [];
  });
}

const started = performance.now();
let loaded = 0;
for (const path of [...modules('src'), ...modules('scripts'), ...modules('test')]) {
  try {
    await import(pathToFileURL(join(root, path)).href);
    loaded++;
  } catch (error) {
    // A module that cannot load here is simply transpiled later by its test; say so, fail nothing.
    process.stderr.write(`warm-transpile-cache: ${relative(root, path)}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}\n`);
  }
}
process.stderr.write(`warm-transpile-cache: ${loaded} modules in ${Math.round(performance.now() - started)} ms\n`);
