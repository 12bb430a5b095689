import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Runs the steps of one GitHub Actions job here, as the runner would, for a pull_request event: what GitHub cannot
 * do for a test. actions/checkout is a git clone of `origin` (ref, path, sparse-checkout honoured); setup-node is
 * the node on PATH; github-script steps are not run (they talk to GitHub) but their condition is evaluated; `run`
 * steps go to bash as on ubuntu-latest (`bash --noprofile --norc -eo pipefail`), in their working-directory, with
 * `${{ }}` expressions, env, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY. `npm ci` is npm's own lifecycle (preinstall,
 * install, postinstall, prepare of the package in that folder) over this repository's node_modules, not a download.
 */
export interface Step {
  readonly id?: string;
  readonly name?: string;
  readonly run?: string;
  readonly if?: string;
  readonly uses?: string;
  readonly 'working-directory'?: string;
  readonly with?: Record<string, string | number | boolean>;
  readonly env?: Record<string, string>;
}

export interface PullRequestEvent {
  /** A git repository holding the base branch and the pull request's (merge) commit. */
  readonly origin: string;
  readonly baseRef: string;
  /** The commit the event is for (GitHub's merge commit of the pull request). */
  readonly sha: string;
  readonly labels: readonly string[];
  /** This repository's node_modules, linked by the `npm ci` stand-in. */
  readonly nodeModules: string;
  /** The repository's secrets (`secrets.NAME`); as on GitHub, one not set reads as empty. */
  readonly secrets?: Readonly<Record<string, string>>;
  /** Other repositories a checkout may name (`with: repository: owner/name`), as local git repositories. */
  readonly repositories?: Readonly<Record<string, string>>;
}

export interface JobResult {
  readonly success: boolean;
  /** Each step's outcome, in order (`skipped` when its condition was false). */
  readonly outcomes: { readonly step: string; readonly outcome: 'success' | 'failure' | 'skipped'; readonly stderr: string }[];
  readonly summary: string;
}

export function runJob(steps: readonly Step[], workspace: string, event: PullRequestEvent): JobResult {
  mkdirSync(workspace, { recursive: true });
  const files = join(workspace, '..', 'runner');
  mkdirSync(files, { recursive: true });
  const summaryFile = join(files, 'summary');
  writeFileSync(summaryFile, '');
  const npmShim = writeNpmShim(files, event.nodeModules);
  const github = {
    base_ref: event.baseRef,
    sha: event.sha,
    repository: 'owner/repo',
    event: { pull_request: { number: 7, labels: event.labels.map((name) => ({ name })), head: { repo: { full_name: 'owner/repo' } } } },
  };
  const secrets = event.secrets ?? {};
  const outputs: Record<string, { outputs: Record<string, string>; outcome: string }> = {};
  const outcomes: JobResult['outcomes'][number][] = [];
  let failed = false;
  for (const [index, step] of steps.entries()) {
    const label = step.name ?? step.uses ?? step.run ?? String(index);
    // As GitHub: a condition without a status function holds only while every step so far succeeded.
    const condition = step.if === undefined ? 'success()' : /\b(success|failure|always|cancelled)\(/.test(step.if) ? step.if : `success() && (${step.if})`;
    if (!evaluate(condition, { github, steps: outputs, failed, secrets })) {
      outcomes.push({ step: label, outcome: 'skipped', stderr: '' });
      continue;
    }
    const outputFile = join(files, `output-${index}`);
    writeFileSync(outputFile, '');
    const expand = (text: string) => text.replace(/\$\{\{\s*(.+?)\s*\}\}/g, (_, expression: string) => String(evaluate(expression, { github, steps: outputs, failed, secrets }) ?? ''));
    const withs = Object.fromEntries(Object.entries(step.with ?? {}).map(([key, value]) => [key, expand(String(value))]));
    let status = 0;
    let stderr = '';
    if (step.uses?.startsWith('actions/checkout@')) {
      const other = withs['repository'];
      const origin = other ? event.repositories?.[other] : event.origin;
      if (origin === undefined) throw new Error(`checkout of ${other}: not in the event's repositories`);
      checkout(origin, join(workspace, withs['path'] ?? '.'), withs['ref'] || (other ? 'HEAD' : event.sha), withs['sparse-checkout']);
    } else if (step.run !== undefined) {
      const env: Record<string, string> = { ...(process.env as Record<string, string>), PATH: `${npmShim}:${process.env['PATH']}`, GITHUB_OUTPUT: outputFile, GITHUB_STEP_SUMMARY: summaryFile, GITHUB_WORKSPACE: workspace };
      for (const [key, value] of Object.entries(step.env ?? {})) env[key] = expand(value);
      const result = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', expand(step.run)], { cwd: join(workspace, step['working-directory'] ?? '.'), env, encoding: 'utf8', timeout: 120_000 });
      status = result.status ?? 1;
      stderr = `${result.stderr}${result.error ? String(result.error) : ''}`;
    }
    const stepOutputs = Object.fromEntries(readLines(outputFile).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
    const outcome = status === 0 ? 'success' : 'failure';
    if (step.id) outputs[step.id] = { outputs: stepOutputs, outcome };
    outcomes.push({ step: label, outcome, stderr });
    if (status !== 0) failed = true;
  }
  return { success: !failed, outcomes, summary: readFileSync(summaryFile, 'utf8') };
}

function checkout(origin: string, dir: string, ref: string, sparse: string | undefined): void {
  const git = (...args: string[]) => execFileSync('git', ['-c', 'advice.detachedHead=false', ...args], { stdio: 'pipe' });
  git('clone', '-q', '--no-checkout', origin, dir);
  if (sparse) git('-C', dir, 'sparse-checkout', 'set', '--no-cone', ...sparse.split('\n').filter(Boolean));
  // A branch is origin/<ref> in the clone; a tag or HEAD is itself.
  const branch = spawnSync('git', ['-C', dir, 'rev-parse', '-q', '--verify', `refs/remotes/origin/${ref}`]).status === 0;
  git('-C', dir, 'checkout', '-q', ref.match(/^[0-9a-f]{40}$/) || !branch ? ref : `origin/${ref}`);
}

/** `npm ci` as npm runs it for the package in the current folder, over existing modules; any other npm command is npm's. */
function writeNpmShim(dir: string, nodeModules: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const npm = execFileSync('bash', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim();
  writeFileSync(
    join(bin, 'npm'),
    `#!/bin/sh\nif [ "$1" = ci ]; then\n  ln -s '${nodeModules}' node_modules || exit 1\n  for script in preinstall install postinstall prepare; do '${npm}' run --if-present "$script" || exit 1; done\n  exit 0\nfi\nexec '${npm}' "$@"\n`,
    { mode: 0o755 },
  );
  return bin;
}

/**
 * The expressions these workflows use: contexts (`github.…`, `secrets.…`, `steps.<id>.outputs.…`, `steps.<id>.outcome`, `a.*.b`),
 * string literals, `==`, `!=`, `!`, `&&`, `||`, and the functions success(), failure(), always(), contains().
 */
function evaluate(expression: string, context: { github: unknown; steps: unknown; failed: boolean; secrets: Readonly<Record<string, string>> }): unknown {
  const js = expression
    .replace(/'((?:[^']|'')*)'/g, (_, text: string) => JSON.stringify(text.replace(/''/g, "'")))
    .replace(/\.\*\.(\w+)/g, '.map((item) => item?.$1)')
    .replace(/\bsuccess\(\)/g, '!failed')
    .replace(/\bfailure\(\)/g, 'failed')
    .replace(/\balways\(\)/g, 'true')
    .replace(/([^=!])==([^=])/g, '$1===$2')
    .replace(/!=([^=])/g, '!==$1');
  const contains = (haystack: unknown, needle: unknown) => (Array.isArray(haystack) ? haystack.includes(needle) : String(haystack).toLowerCase().includes(String(needle).toLowerCase()));
  const steps = new Proxy(context.steps as Record<string, unknown>, { get: (target, key) => target[key as string] ?? { outputs: {}, outcome: '' } });
  const secrets = new Proxy(context.secrets, { get: (target, key) => target[key as string] ?? '' });
  return new Function('github', 'steps', 'failed', 'contains', 'secrets', `return (${js});`)(context.github, steps, context.failed, contains, secrets);
}

function readLines(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').filter((line) => line !== '');
}
