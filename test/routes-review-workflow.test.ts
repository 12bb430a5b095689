import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';

/** The shipped workflow cannot run here; its shape and its shell step can be checked. */
interface Step {
  readonly id?: string;
  readonly name?: string;
  readonly run?: string;
  readonly if?: string;
  readonly uses?: string;
  readonly with?: Record<string, string>;
}
const workflow = parse(readFileSync(new URL('../.github/workflows/routes-review.yml', import.meta.url), 'utf8')) as {
  on: { pull_request: { paths: string[] } };
  permissions: Record<string, string>;
  jobs: { review: { steps: Step[] } };
};
const steps = workflow.jobs.review.steps;

t.test('the workflow runs on pull requests touching routes.yaml: npm ci, then the review against the base branch', async (t) => {
  t.strictSame(workflow.on.pull_request.paths, ['routes.yaml']);
  t.strictSame(workflow.permissions, { contents: 'read', 'pull-requests': 'write' });
  const runs = steps.map((step) => step.run ?? '');
  const install = runs.findIndex((run) => run.trim() === 'npm ci');
  const review = steps.findIndex((step) => step.id === 'review');
  t.ok(install !== -1 && install < review, 'npm ci comes first');
  t.match(steps[review]!.run, /npm run --silent review -- --base "origin\/\$BASE_REF" > review\.md/);
  t.match(steps[review]!.run, />> "\$GITHUB_STEP_SUMMARY"/);
  const comment = steps.find((step) => step.uses?.startsWith('actions/github-script'));
  t.match(comment?.with?.['script'], /updateComment[\s\S]*createComment/, 'one comment, updated rather than repeated');
  t.match(steps.at(-1)?.if, /steps\.review\.outputs\.code != '0'/, 'the last step fails the job unless the review exited 0');
});

t.test("the review step's shell: summary written, exit code kept, a side that does not compile shown in the summary", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'review-workflow-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const run = steps.find((step) => step.id === 'review')!.run!;
  // `npm` stands in for the review command: it prints what the real one would and exits with the code under test.
  for (const [code, stdout, stderr] of [[1, '### routes.yaml review: 1 breaking', ''], [2, '', 'origin/main:routes.yaml:3:5: oops']] as const) {
    writeFileSync(join(dir, 'npm'), `#!/bin/sh\nprintf '%s\\n' '${stdout}'\nprintf '%s\\n' '${stderr}' >&2\nexit ${code}\n`, { mode: 0o755 });
    writeFileSync(join(dir, 'summary'), '');
    writeFileSync(join(dir, 'output'), '');
    execFileSync('bash', ['-e', '-c', run], { cwd: dir, stdio: 'pipe', env: { ...process.env, PATH: `${dir}:${process.env['PATH']}`, BASE_REF: 'main', GITHUB_STEP_SUMMARY: join(dir, 'summary'), GITHUB_OUTPUT: join(dir, 'output') } });
    t.equal(readFileSync(join(dir, 'output'), 'utf8'), `code=${code}\n`);
    const summary = readFileSync(join(dir, 'summary'), 'utf8');
    if (code === 1) t.equal(summary, '### routes.yaml review: 1 breaking\n');
    else t.match(summary, /^### routes\.yaml review: not compared\n\n```\norigin\/main:routes\.yaml:3:5: oops\n/);
  }
});
