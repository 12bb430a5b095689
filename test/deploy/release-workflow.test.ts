// .github/workflows/release.yaml cannot run here (no GitHub, no Docker): its shape is checked, and its one script
// of our own (the tag must be package.json's version) runs under bash as the runner would run it.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import type { Step } from '../scripts/review/workflow-runner.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
interface Job {
  needs?: string | string[];
  permissions?: Record<string, string>;
  steps: Step[];
}
const workflow = parse(readFileSync(join(repoRoot, '.github/workflows/release.yaml'), 'utf8')) as { on: Record<string, unknown>; permissions: Record<string, string>; jobs: Record<string, Job> };
const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;

t.test('a tag v* and nothing else starts it; the token can only read, but for the image job', async (t) => {
  t.strictSame(workflow.on, { push: { tags: ['v*'] } });
  t.match(version, /^\d+\.\d+\.\d+$/, 'package.json carries a semantic version');
  t.strictSame(workflow.permissions, { contents: 'read' });
});

t.test('the test job checks the tag against package.json, then runs .ci/run (the suite on Node 24 and 22)', async (t) => {
  const steps = workflow.jobs['test']!.steps;
  t.match(steps[0], { uses: /^actions\/checkout@v\d+$/ });
  const runs = steps.map((step) => step.run ?? '');
  const suite = runs.findIndex((run) => run.trim() === '.ci/run');
  const tagCheck = runs.findIndex((run) => run.includes('GITHUB_REF_NAME'));
  t.ok(suite > 0, '.ci/run is a step of its own');
  t.ok(tagCheck > 0 && tagCheck < suite, 'the tag is checked before the suite spends an hour');
  const script = runs[tagCheck]!;
  const run = (tag: string) => spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], { cwd: repoRoot, env: { ...process.env, GITHUB_REF_NAME: tag }, encoding: 'utf8' });
  t.equal(run(`v${version}`).status, 0, `v${version} is this version's tag`);
  const wrong = run('v9.9.9');
  t.equal(wrong.status, 1, 'another tag fails the release');
  t.match(wrong.stdout, new RegExp(`::error::tag v9\\.9\\.9 does not match package.json version ${version.replace(/\./g, '\\.')}`));
});

t.test('the image job needs the tests, and builds deploy/Dockerfile from the repository root with build-push-action', async (t) => {
  const image = Object.values(workflow.jobs).find((job) => job.steps.some((step) => step.uses?.startsWith('docker/build-push-action@')));
  t.ok(image, 'a job builds the image');
  t.strictSame([image!.needs].flat(), ['test'], 'only after the suite passed');
  t.strictSame(image!.permissions, { contents: 'read', packages: 'write' }, 'it alone may push a package');
  const build = image!.steps.find((step) => step.uses?.startsWith('docker/build-push-action@'))!;
  t.match(build.with, { context: '.', file: 'deploy/Dockerfile', push: true });
  t.ok(image!.steps.some((step) => step.uses?.startsWith('docker/login-action@')), 'it logs in to push');
  const meta = image!.steps.find((step) => step.uses?.startsWith('docker/metadata-action@'));
  t.match(meta?.with?.['tags'], /type=semver,pattern=\{\{version\}\}/, 'the image is tagged with the version');
  t.equal(build.with?.['tags'], '${{ steps.meta.outputs.tags }}');
  t.notOk(build.with?.['build-contexts'], 'the shipped example roster: the image a user builds names its own config context');
});
