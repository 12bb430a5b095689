// deploy/config-repository/: a repository holding only a routes.yaml, which builds the gateway image at the
// release gateway.env pins and reviews its pull requests with that release. Docker and GitHub are not here: the
// build script runs against a stand-in `docker` that records what it was asked, and the review workflow's steps
// run as the runner would (test/scripts/review/workflow-runner.ts), on local git repositories.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import { copyGatewayTree } from '../helpers/gateway-tree.js';
import { runJob, type Step } from '../scripts/review/workflow-runner.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const example = join(repoRoot, 'deploy/config-repository');

// git clones, npm and the review compiled by tsx, on a machine shared with other work.
t.setTimeout(400_000);

/** gateway.env as sh reads it. */
function pin(): Record<string, string> {
  return Object.fromEntries([...readFileSync(join(example, 'gateway.env'), 'utf8').matchAll(/^([A-Z_]+)=(\S+)$/gm)].map((match) => [match[1]!, match[2]!]));
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', '-c', 'advice.detachedHead=false', ...args], { cwd, encoding: 'utf8', stdio: 'pipe' }).trim();

/** A git repository of the gateway with its release tagged as gateway.env pins it, and a later commit on main. */
function gatewayRepository(dir: string): string {
  const origin = copyGatewayTree(join(dir, 'gateway-origin'));
  rmSync(join(origin, 'node_modules'));
  git(origin, 'init', '-q');
  git(origin, 'add', '-A');
  git(origin, 'commit', '-qm', 'the release');
  git(origin, 'tag', pin()['GATEWAY_VERSION']!);
  writeFileSync(join(origin, 'deploy/Dockerfile'), '# after the release\n');
  git(origin, 'commit', '-qam', 'work after the release');
  return origin;
}

t.test('the example routes.yaml compiles (ROUTES_FILE names it)', async (t) => {
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/check.ts'], { cwd: repoRoot, env: { ...process.env, ROUTES_FILE: join(example, 'routes.yaml') }, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
  t.equal(code, 0, stderr);
  t.equal(stderr, '');
  t.match(stdout, /routes\.yaml: OK \(3 models, 2 providers\)\n$/);
  t.match(pin(), { GATEWAY_REPOSITORY: /^[\w.-]+\/[\w.-]+$/, GATEWAY_VERSION: /^v\d+\.\d+\.\d+$/ });
  t.equal(pin()['GATEWAY_VERSION'], `v${(JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version}`, 'it pins the release this tree is');
});

t.test('build-image.sh: docker build of the gateway at the pinned tag, with this folder as the build context `config`', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'config-repository-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const origin = gatewayRepository(dir);
  // The stand-in docker: its arguments, one a line, and the Dockerfile it was given, as it was then.
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'docker'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${dir}/docker-args'\nwhile [ "$1" != -f ]; do shift; done\ncp "$2" '${dir}/dockerfile-seen'\n`, { mode: 0o755 });

  const run = spawnSync(join(example, 'build-image.sh'), ['registry.example/gw:1'], { env: { ...process.env, PATH: `${bin}:${process.env['PATH']}`, GATEWAY_GIT_URL: origin }, encoding: 'utf8', timeout: 60_000 });
  t.equal(run.status, 0, run.stderr);
  const args = readFileSync(join(dir, 'docker-args'), 'utf8').trim().split('\n');
  t.equal(args[0], 'build');
  t.equal(args[args.indexOf('--build-context') + 1], `config=${example}`, 'this folder is the context named config (its routes.yaml replaces the example)');
  t.equal(args[args.indexOf('-t') + 1], 'registry.example/gw:1');
  const context = args.at(-1)!;
  t.equal(args[args.indexOf('-f') + 1], join(context, 'deploy/Dockerfile'), "the gateway's own Dockerfile, from the clone that is the context");
  t.equal(readFileSync(join(dir, 'dockerfile-seen'), 'utf8'), readFileSync(join(repoRoot, 'deploy/Dockerfile'), 'utf8'), 'the Dockerfile as tagged, not as on main since');
  t.match(readFileSync(join(dir, 'dockerfile-seen'), 'utf8'), /^FROM scratch AS config$/m, 'which has the stage config to replace');
  t.match(run.stdout, /^built registry\.example\/gw:1: gateway v\d+\.\d+\.\d+ with .*routes\.yaml\n$/);
  t.equal(spawnSync('test', ['-e', context]).status, 1, 'the clone is removed afterwards');
});

const workflow = parse(readFileSync(join(example, '.github/workflows/routes-review.yml'), 'utf8')) as { on: { pull_request: { paths: string[] } }; jobs: { review: { steps: Step[] } } };

t.test("the review workflow: our routes.yaml reviewed by the gateway release the base branch pins, nothing of the pull request run", async (t) => {
  t.strictSame(workflow.on.pull_request.paths, ['routes.yaml']);
  const steps = workflow.jobs.review.steps;
  const dir = mkdtempSync(join(tmpdir(), 'config-repository-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const gateway = gatewayRepository(dir);
  // Our repository: this example on main, and a pull request that takes a model off the roster.
  const origin = join(dir, 'config-origin');
  cpSync(example, origin, { recursive: true });
  git(origin, 'init', '-q');
  git(origin, 'add', '-A');
  git(origin, 'commit', '-qm', 'our roster');
  git(origin, 'checkout', '-qb', 'pull-request');
  writeFileSync(join(origin, 'routes.yaml'), readFileSync(join(origin, 'routes.yaml'), 'utf8').replace('  openai/gpt-4.1-mini:\n', ''));
  git(origin, 'commit', '-qam', 'take gpt-4.1-mini off');
  const sha = git(origin, 'commit-tree', 'pull-request^{tree}', '-p', 'main', '-p', 'pull-request', '-m', 'Merge pull-request into main');
  git(origin, 'checkout', '-q', 'main');

  const event = { origin, baseRef: 'main', sha, labels: [], nodeModules: join(repoRoot, 'node_modules'), repositories: { [pin()['GATEWAY_REPOSITORY']!]: gateway } };
  const job = runJob(steps, join(dir, 'workspace'), event);
  const review = job.outcomes.find((outcome) => outcome.step === steps.find((step) => step.id === 'review')!.name);
  t.equal(review?.outcome, 'success', review?.stderr ?? '');
  t.match(job.summary, /^### routes\.yaml review: 1 breaking · [^\n]*\n\n`\.\.\/base\/routes\.yaml` → `\.\.\/pull-request\/routes\.yaml`\n/);
  t.match(job.summary, /\| `model_removed` \| `openai\/gpt-4\.1-mini` \|/);
  t.equal(job.success, false, 'a breaking change fails the job');
  t.equal(git(join(dir, 'workspace/gateway'), 'describe', '--tags'), pin()['GATEWAY_VERSION'], 'the gateway was checked out at the pinned tag');
  t.equal(spawnSync('test', ['-e', join(dir, 'workspace/pull-request/gateway.env')]).status, 1, 'only routes.yaml of the pull request is checked out');

  const accepted = runJob(steps, join(dir, 'workspace-2'), { ...event, labels: ['routes-breaking-ok'] });
  t.equal(accepted.success, true, 'a reviewer who accepts it labels the pull request');
});
