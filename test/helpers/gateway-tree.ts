import { cpSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The gateway's build inputs, as a release holds them, copied to `tree`: package.json and its lockfile, tsconfig,
 * schemas/, scripts/, src/ (without src/generated/) and, unless `withRoutes` is false, the shipped routes.yaml.
 * No dist/. node_modules is linked to this repository's, so `npm run build` there needs no download.
 */
export function copyGatewayTree(tree: string, { withRoutes = true } = {}): string {
  mkdirSync(tree, { recursive: true });
  for (const file of ['package.json', 'package-lock.json', 'tsconfig.json', ...(withRoutes ? ['routes.yaml'] : [])]) cpSync(join(repoRoot, file), join(tree, file));
  for (const folder of ['schemas', 'scripts']) cpSync(join(repoRoot, folder), join(tree, folder), { recursive: true });
  cpSync(join(repoRoot, 'src'), join(tree, 'src'), { recursive: true, filter: (source) => !source.startsWith(join(repoRoot, 'src', 'generated')) });
  cpSync(join(repoRoot, 'deploy'), join(tree, 'deploy'), { recursive: true });
  symlinkSync(join(repoRoot, 'node_modules'), join(tree, 'node_modules'), 'dir');
  return tree;
}
