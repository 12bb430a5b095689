// `npm run build` takes out of dist/ what no source in src/ compiles to any more (a module moved or removed),
// and leaves every current output alone. Run on a real folder pair in a temporary directory, not on the
// project's dist/, which other tests run from.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import t from 'tap';
import { pruneStaleOutputs } from '../../scripts/prune-dist.js';

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'prune-dist-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

const listed = (dir: string) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((entry) => `${relative(dir, join(entry.parentPath, entry.name))}${entry.isDirectory() ? '/' : ''}`)
    .sort();

t.test('stale outputs and the folders they leave empty go; current outputs stay', async (t) => {
  const src = tree({ 'server.ts': '', 'routing/upstream.ts': '', 'generated/routes.ts': '', 'types.d.ts': '' });
  const dist = tree({
    'server.js': 'current',
    'server.js.map': 'current',
    'routing/upstream.js': 'current',
    'routing/upstream.js.map': 'current',
    'routing/old-name.js': 'moved away',
    'generated/routes.js': 'current',
    'engine/chat.js': 'a folder that no longer exists',
    'engine/deep/er.js.map': 'under it',
    'metrics.js': 'moved into a folder',
    'types.d.js': 'no source makes this',
  });
  t.teardown(() => [src, dist].forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  const removed = pruneStaleOutputs(src, dist).sort();
  t.same(removed, ['engine/chat.js', 'engine/deep/er.js.map', 'metrics.js', 'routing/old-name.js', 'types.d.js']);
  t.same(listed(dist), ['generated/', 'generated/routes.js', 'routing/', 'routing/upstream.js', 'routing/upstream.js.map', 'server.js', 'server.js.map']);
  t.same(pruneStaleOutputs(src, dist), [], 'a second build finds nothing more to take out');
});

t.test('a link in dist/ is taken out as itself, never followed to what it points at', async (t) => {
  const src = tree({ 'server.ts': '' });
  const dist = tree({ 'server.js': 'current' });
  const elsewhere = tree({ 'keep.js': 'not the build\'s', 'deep/keep.js.map': 'nor this' });
  t.teardown(() => [src, dist, elsewhere].forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  symlinkSync(elsewhere, join(dist, 'linked-folder'));
  symlinkSync(join(elsewhere, 'keep.js'), join(dist, 'linked-file.js'));

  t.same(pruneStaleOutputs(src, dist).sort(), ['linked-file.js', 'linked-folder']);
  t.same(listed(dist), ['server.js']);
  t.same(listed(elsewhere), ['deep/', 'deep/keep.js.map', 'keep.js'], 'nothing outside dist/ is touched');
  t.ok(existsSync(join(elsewhere, 'keep.js')));
});

t.test('the first build, with no dist/ yet, takes out nothing', async (t) => {
  const src = tree({ 'server.ts': '' });
  t.teardown(() => rmSync(src, { recursive: true, force: true }));
  t.same(pruneStaleOutputs(src, join(src, 'no-dist-yet')), []);
});
