import { execFile } from 'node:child_process';

/** `npm --prefix <tree> run <script>` typed in `typedIn` (npm runs it in the tree and says where it was typed in INIT_CWD). */
export function npm(tree: string, args: readonly string[], env: Record<string, string>, typedIn = tree): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('npm', ['--prefix', tree, 'run', '--silent', ...args], { cwd: typedIn, env: { ...process.env, ROUTES_FILE: '', ...env }, timeout: 240_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

/** A roster only these tests have: one model, `mine/only-here`, on a provider whose base URL comes from MINE_BASE_URL. */
export const ROSTER = `version: 1
providers:
  mine:
    base_url: https://mine.invalid/v1
    base_url_env: MINE_BASE_URL
    api_key_env: MINE_API_KEY
models:
  mine/only-here: { upstream_model: upstream-name }
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

