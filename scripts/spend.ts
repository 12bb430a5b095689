// `npm run --silent spend [-- --json] [--routes FILE | --from http://HOST:PORT]`: each budgeted caller's spend in
// the current UTC day and month, its budgets and what is left. From Redis with REDIS_URL (callers and budgets from
// routes.yaml); from a running gateway's /metrics with --from (the only way to a gateway that counts in memory).
// Exit 0; 2 when the figures cannot be read.
import { compileRoutesFileOrExit } from './routes-file.js';
import { spendFromGateway, spendFromRedis, SpendError } from './spend/read-spend.js';
import { spendJson, spendTable } from './spend/spend-output.js';

const USAGE = 'usage: npm run --silent spend -- [--json] [--routes FILE (default routes.yaml)] | [--json] --from http://HOST:PORT';

async function main(args: readonly string[]): Promise<number> {
  const json = args.includes('--json');
  const rest = args.filter((arg) => arg !== '--json');
  const option = (name: string): string | undefined | null => {
    const at = rest.indexOf(name);
    if (at === -1) return undefined;
    const value = rest[at + 1];
    rest.splice(at, 2);
    return value === undefined || value.startsWith('--') ? null : value;
  };
  const from = option('--from');
  const routes = option('--routes');
  if (from === null) return usage('--from needs the gateway\'s origin, e.g. http://127.0.0.1:8080');
  if (routes === null) return usage('--routes needs a file');
  if (rest.length > 0) return usage(`unknown argument ${rest[0]}`);
  if (from !== undefined && !/^https?:\/\/[^/]+/.test(from)) return usage(`--from ${JSON.stringify(from)} is not an http(s) origin`);
  const redisUrl = process.env['REDIS_URL'];
  if (from === undefined && !redisUrl) {
    process.stderr.write('spend: REDIS_URL is not set, so the spend is counted in the gateway\'s own memory: read it from the running gateway with --from http://HOST:PORT (its /metrics)\n');
    return 2;
  }
  try {
    const report = from !== undefined ? await spendFromGateway(from) : await spendFromRedis(redisUrl!, compileRoutesFileOrExit(routes).tables);
    process.stdout.write(json ? spendJson(report) : spendTable(report));
    return 0;
  } catch (error) {
    process.stderr.write(`spend: ${error instanceof SpendError ? error.message : `failed: ${error instanceof Error ? error.message : String(error)}`}\n`);
    return 2;
  }
}

function usage(problem: string): number {
  process.stderr.write(`spend: ${problem}\n${USAGE}\n`);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
