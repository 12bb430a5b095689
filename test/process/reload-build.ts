// A build of the gateway the test can change under a running primary, as `npm run build` changes dist/ under a
// running gateway: a copy of the real dist/ (npm test builds it first) in a temporary directory, whose generated
// routes table the test rewrites from routes YAML through the real compiler, or breaks on purpose.
import { appendFileSync, cpSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileRoutes } from '../../scripts/routes/compile-routes.js';

const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url));

export interface TestBuild {
  /** dist/server.js of this build: what `node` runs, and what the primary forks its workers from. */
  readonly serverJs: string;
  /** The routes_sha256 the compiled YAML has. */
  writeRoutes(yaml: string): string;
  /** dist/generated/routes.js with a syntax error: a worker fails to load it. */
  breakRoutesSyntax(): void;
  /** dist/app.js removed: a missing file. */
  removeApp(): void;
  /** dist/app.js waits forever at load: a worker that never answers its health check. */
  hangApp(): void;
  /** dist/generated/routes.js exits the process at load, saying nothing. */
  exitAtLoad(code: number): void;
  /** dist/app.js as built again. */
  restoreApp(): void;
  remove(): void;
}

export function copyBuild(routesYaml: string): TestBuild {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-reload-'));
  const dist = join(dir, 'dist');
  const copyApp = () => cpSync(join(REPOSITORY, 'dist/app.js'), join(dist, 'app.js'));
  cpSync(join(REPOSITORY, 'dist'), dist, { recursive: true });
  // The copy resolves its packages from the repository's node_modules, and is ESM as the repository is.
  symlinkSync(join(REPOSITORY, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  const routesJs = join(dist, 'generated/routes.js');
  const build: TestBuild = {
    serverJs: join(dist, 'server.js'),
    writeRoutes(yaml) {
      const compiled = compileRoutes(yaml);
      if (!compiled.ok) throw new Error(`test routes do not compile: ${JSON.stringify(compiled.problems)}`);
      // What scripts/emit/emit-routes.ts writes, as tsc compiles it.
      writeFileSync(routesJs, `export const GATEWAY_VERSION = "0.0.0-reload-test";\nexport const routeTables = ${JSON.stringify(compiled.tables)};\n`);
      return compiled.tables.sourceSha256;
    },
    breakRoutesSyntax: () => writeFileSync(routesJs, 'export const routeTables = {\n'),
    removeApp: () => unlinkSync(join(dist, 'app.js')),
    hangApp: () => appendFileSync(join(dist, 'app.js'), '\nawait new Promise(() => {});\n'),
    exitAtLoad: (code) => writeFileSync(routesJs, `process.exit(${code});\n`),
    restoreApp: copyApp,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
  build.writeRoutes(routesYaml);
  return build;
}
