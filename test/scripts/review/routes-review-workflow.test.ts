import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import { startPrometheus } from '../../helpers/prometheus-server.js';
import { runJob, type Step } from './workflow-runner.js';

/** The shipped workflow cannot run here (no GitHub): its steps are run as the runner would (helpers/workflow-runner.ts). */
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const workflow = parse(readFileSync(join(repoRoot, '.github/workflows/routes-review.yml'), 'utf8')) as {
  on: { pull_request: { paths: string[] } };
  permissions: Record<string, string>;
  jobs: { review: { steps: Step[] } };
};
const steps = workflow.jobs.review.steps;

// Each job runs npm and a review compiled by tsx, on a machine shared with other work.
t.setTimeout(400_000);

t.test('the workflow: the base branch checked out apart, the pull request\'s routes.yaml alone, nothing of the pull request run', async (t) => {
  t.strictSame(workflow.on.pull_request.paths, ['routes.yaml']);
  t.strictSame(workflow.permissions, { contents: 'read', 'pull-requests': 'write' });
  const checkouts = steps.filter((step) => step.uses?.startsWith('actions/checkout@'));
  t.strictSame(checkouts.map((step) => [step.with?.['path'], step.with?.['ref'], step.with?.['sparse-checkout']]), [
    ['base', '${{ github.base_ref }}', undefined],
    ['pull-request', undefined, '/routes.yaml'],
  ]);
  for (const step of steps.filter((step) => /\bnpm\b/.test(step.run ?? ''))) t.equal(step['working-directory'], 'base', `${step.name ?? step.run}: npm runs in the base tree`);
  const review = steps.find((step) => step.id === 'review')!;
  t.match(review.run, /npm run --silent review -- routes\.yaml \.\.\/pull-request\/routes\.yaml > \.\.\/review\.md/);
  t.notMatch(JSON.stringify(steps), /pull-request\/(?!routes\.yaml)/, 'nothing of the pull request but routes.yaml is named');
  const comment = steps.find((step) => step.uses?.startsWith('actions/github-script'));
  t.match(comment?.with?.['script'], /updateComment[\s\S]*createComment/, 'one comment, updated rather than repeated');
  t.match(steps.at(-1)?.if, /steps\.review\.outputs\.code != '0'/, 'the last step fails the job unless the review exited 0');
});

/**
 * A repository (the `origin` the job checks out) with this project's files on main, and a pull request branch made
 * by `change`; returns the pull request's merge commit, as GitHub makes it for a pull_request event.
 */
function repository(dir: string, change: (tree: string) => void): { origin: string; sha: string } {
  const origin = join(dir, 'origin');
  mkdirSync(origin);
  const tracked = execFileSync('git', ['ls-files'], { cwd: repoRoot, encoding: 'utf8' }).split('\n');
  const wanted = tracked.filter((file) => /^(package(-lock)?\.json|tsconfig[\w.]*\.json|routes\.yaml|(scripts|src|schemas)\/.+)$/.test(file));
  for (const file of wanted) {
    if (!existsSync(join(repoRoot, file))) continue;
    mkdirSync(dirname(join(origin, file)), { recursive: true });
    cpSync(join(repoRoot, file), join(origin, file));
  }
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd: origin, encoding: 'utf8', stdio: 'pipe' }).trim();
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'base');
  git('checkout', '-qb', 'pull-request');
  change(origin);
  git('add', '-A');
  git('commit', '-qm', 'the pull request');
  const merge = git('commit-tree', 'pull-request^{tree}', '-p', 'main', '-p', 'pull-request', '-m', 'Merge pull-request into main');
  git('checkout', '-q', 'main');
  return { origin, sha: merge };
}

/** A pull request that removes a model and edits what would judge it: the review script, the review tool, an install script. */
function removeModelAndOverrule(markers: string) {
  return (tree: string) => {
    const routes = join(tree, 'routes.yaml');
    writeFileSync(routes, readFileSync(routes, 'utf8').replace('  openai/gpt-4.1-nano:\n', ''));
    const marker = (name: string) => `node -e "require('fs').writeFileSync(${JSON.stringify(join(markers, name)).replace(/"/g, "'")}, '')"`;
    const pkg = JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    pkg.scripts['review'] = `${marker('review-script')} && exit 0`;
    pkg.scripts['preinstall'] = marker('preinstall');
    pkg.scripts['postinstall'] = marker('postinstall');
    writeFileSync(join(tree, 'package.json'), JSON.stringify(pkg, null, 2));
    const tool = join(tree, 'scripts/review/review.ts');
    writeFileSync(tool, `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(join(markers, 'review-tool'))}, '');\nprocess.exit(0);\n${readFileSync(tool, 'utf8')}`);
  };
}

t.test('a pull request that removes a model and edits the review tool, package.json and install scripts still fails, and none of its code runs', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'review-workflow-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const markers = join(dir, 'markers');
  mkdirSync(markers);
  const { origin, sha } = repository(dir, removeModelAndOverrule(markers));
  const event = { origin, baseRef: 'main', sha, labels: [], nodeModules: join(repoRoot, 'node_modules') };

  const job = runJob(steps, join(dir, 'workspace'), event);
  t.equal(job.success, false, 'the job fails');
  const review = job.outcomes.find((outcome) => outcome.step === steps.find((step) => step.id === 'review')!.name);
  t.equal(review?.outcome, 'success', review?.stderr ?? '');
  t.match(job.summary, /^### routes\.yaml review: 1 breaking · /, 'the base branch\'s tool judged the change');
  t.match(job.summary, /\| `model_removed` \| `openai\/gpt-4\.1-nano` \|/);
  t.match(job.outcomes.at(-1), { outcome: 'failure', stderr: '' });
  t.strictSame(execFileSync('ls', ['-A', markers], { encoding: 'utf8' }), '', 'no script of the pull request ran (preinstall, postinstall, review script, review tool)');
  t.notOk(existsSync(join(dir, 'workspace/pull-request/package.json')), 'only routes.yaml of the pull request is checked out');

  // A reviewer who accepts the breaking change labels the pull request: the job passes, still without its code.
  const accepted = runJob(steps, join(dir, 'workspace-2'), { ...event, labels: ['routes-breaking-ok'] });
  t.equal(accepted.success, true, JSON.stringify(accepted.outcomes.filter((outcome) => outcome.outcome === 'failure')));
  t.equal(accepted.outcomes.at(-1)?.outcome, 'skipped');
  t.strictSame(execFileSync('ls', ['-A', markers], { encoding: 'utf8' }), '');
});

t.test('a pull request whose routes.yaml does not compile: the summary shows the compiler\'s lines, the job fails', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'review-workflow-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { origin, sha } = repository(dir, (tree) => {
    const routes = join(tree, 'routes.yaml');
    writeFileSync(routes, readFileSync(routes, 'utf8').replace('  openai/gpt-4o: { upstream_model: gpt-4o-2024-11-20 }', '  openai/gpt-4o: { upstream_model: gpt-4o-2024-11-20, max_output_tokens: 0 }'));
  });
  const job = runJob(steps, join(dir, 'workspace'), { origin, baseRef: 'main', sha, labels: [], nodeModules: join(repoRoot, 'node_modules') });
  t.equal(job.success, false);
  t.match(job.summary, /^### routes\.yaml review: not compared\n\n```\n\.\.\/pull-request\/routes\.yaml:\d+:\d+: models\."openai\/gpt-4o"\.max_output_tokens: must be >= 1\n/);
});

t.test('with the secret ROUTES_REVIEW_PROMETHEUS_URL the review is weighted by the traffic Prometheus saw', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'review-workflow-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A real Prometheus that has seen no gateway: every item is "not called in 7 d".
  const prometheus = await startPrometheus({ targets: [] });
  t.teardown(() => prometheus.stop());
  const markers = join(dir, 'markers');
  mkdirSync(markers);
  const { origin, sha } = repository(dir, removeModelAndOverrule(markers));
  const job = runJob(steps, join(dir, 'workspace'), { origin, baseRef: 'main', sha, labels: [], nodeModules: join(repoRoot, 'node_modules'), secrets: { ROUTES_REVIEW_PROMETHEUS_URL: prometheus.url } });
  t.equal(job.success, false, 'still breaking');
  t.match(job.summary, `Traffic over the last 7 d: \`Prometheus ${prometheus.url}\`.`);
  t.match(job.summary, /\| `model_removed` \| `openai\/gpt-4\.1-nano` \| .* \| not called in 7 d \|/);
});
