// `npm run review -- OLD NEW`, `--base REF [NEW]` or `--base-file OLD [NEW]`: what a routes.yaml change does to callers.
// NEW defaults to ROUTES_FILE, else routes.yaml. --base reads NEW's own path at REF in the git repository that
// holds NEW (yours, when ROUTES_FILE is outside this tree); --base-file takes the old side from any file.
// With `--traffic SOURCE [--window 7d]` each item also says the requests and callers it touches (traffic.ts).
// Markdown (or --json) on stdout. Exit 0: nothing breaking; 1: something is; 2: a side does not compile or cannot be read.
import type { Review } from './change.js';
import { reviewChange } from './classify.js';
import { compileSide, readGitSide, readSide, SideError, type Side } from './load-sides.js';
import { reviewJson } from './json-output.js';
import { reviewMarkdown, type TrafficNote } from './markdown-output.js';
import { parseWindow, withTraffic, type TrafficData } from './traffic.js';
import { trafficFromLogs } from './traffic-logs.js';
import { trafficFromPrometheus } from './traffic-prometheus.js';
import { routesFile } from '../routes-path.js';

const USAGE =
  'usage: npm run --silent review -- [--json] OLD NEW | [--json] --base REF [NEW] | [--json] --base-file OLD [NEW]   (NEW defaults to ROUTES_FILE, else routes.yaml)  [--traffic PROMETHEUS_URL | --traffic LOG_FILE …] [--window 7d]';

async function main(args: readonly string[]): Promise<number> {
  const json = args.includes('--json');
  const rest = args.filter((arg) => arg !== '--json');
  const values = (name: string): string[] | null => {
    const found: string[] = [];
    for (let at = rest.indexOf(name); at !== -1; at = rest.indexOf(name)) {
      const value = rest[at + 1];
      if (value === undefined || value.startsWith('--')) return null;
      found.push(value);
      rest.splice(at, 2);
    }
    return found;
  };
  const bases = values('--base');
  const baseFiles = values('--base-file');
  const sources = values('--traffic');
  const windows = values('--window');
  if (bases === null || bases.length > 1) return usage('--base needs one git revision');
  if (baseFiles === null || baseFiles.length > 1) return usage('--base-file needs one file');
  if (bases.length > 0 && baseFiles.length > 0) return usage('give --base or --base-file, not both');
  if (sources === null) return usage('--traffic needs a Prometheus URL or a log file');
  if (windows === null || windows.length > 1) return usage('--window needs one duration such as 7d');
  const window = parseWindow(windows[0] ?? '7d');
  if (!window) return usage(`--window ${JSON.stringify(windows[0])}: a whole number of minutes, hours, days or weeks (90m, 24h, 7d, 2w)`);
  if (windows.length > 0 && sources.length === 0) return usage('--window needs --traffic');
  const prometheus = sources.filter((source) => /^https?:\/\//.test(source));
  if (prometheus.length > 1 || (prometheus.length === 1 && sources.length > 1)) return usage('--traffic: one Prometheus URL, or log files, not both');
  const base = bases[0];
  const baseFile = baseFiles[0];
  const unknown = rest.find((arg) => arg.startsWith('--'));
  if (unknown) return usage(`unknown option ${unknown}`);
  const oneSideGiven = base !== undefined || baseFile !== undefined;
  if (oneSideGiven ? rest.length > 1 : rest.length !== 2) return usage('give two files, or --base REF / --base-file OLD and at most one file');
  const newPath = routesFile(oneSideGiven ? rest[0] : rest[1]);
  let old: Side;
  let next: Side;
  let review: Review;
  try {
    old = compileSide(base !== undefined ? readGitSide(base, newPath) : readSide(routesFile(baseFile ?? rest[0])), 'old');
    next = compileSide(readSide(newPath), 'new');
    review = reviewChange(old.tables, next.tables, next.lineOf);
  } catch (error) {
    // Anything unexpected is exit 2 as well: exit 1 would tell CI "breaking" when nothing was compared.
    const lines = error instanceof SideError ? error.lines : [`review: failed: ${error instanceof Error ? error.message : String(error)}`];
    for (const line of lines) process.stderr.write(`${line}\n`);
    return 2;
  }
  let note: TrafficNote | undefined;
  if (sources.length > 0) {
    // Traffic only weighs the items: a source that cannot be read is said, and the verdict stands without it.
    try {
      const data: TrafficData = prometheus.length === 1 ? await trafficFromPrometheus(prometheus[0]!, window.promql) : await trafficFromLogs(sources, window.ms);
      review = withTraffic(review, data, old.tables, next.tables);
      note = { window: window.label, source: data.source };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      process.stderr.write(`review: traffic not available: ${reason}\n`);
      note = { window: window.label, unavailable: reason };
    }
  }
  process.stdout.write(json ? reviewJson(review) : reviewMarkdown(review, { old: old.label, new: next.label }, note));
  return review.breaking.length > 0 ? 1 : 0;
}

function usage(problem: string): number {
  process.stderr.write(`review: ${problem}\n${USAGE}\n`);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
