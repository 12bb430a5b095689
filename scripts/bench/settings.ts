// What `npm run bench` was asked for: its flags and BENCH_* environment variables, checked once at start-up
// (a bad value is a usage error, exit 2), and the command line that reproduces the run.
import { execFileSync } from 'node:child_process';
import os from 'node:os';

export const argv = process.argv.slice(2);
const flag = (name: string) => argv.some((arg) => arg === name || arg.startsWith(`${name}=`));
const flagValue = (name: string) => argv.find((arg) => arg.startsWith(`${name}=`))?.slice(name.length + 1);
/** Exits 2 on an argument `npm run bench` does not know (other scripts share these modules, with their own flags). */
export function checkBenchArguments(): void {
  for (const arg of argv) {
    if (!/^--(quick|no-write|soak-memory(=\d+)?)$/.test(arg)) {
      process.stderr.write(`bench: unknown argument ${arg} (known: --quick, --no-write, --soak-memory[=seconds])\n`);
      process.exit(2);
    }
  }
}

export function envNumber(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    process.stderr.write(`bench: ${name} must be a number in ${min}..${max}, got ${raw}\n`);
    process.exit(2);
  }
  return value;
}

function envSwitch(name: string, fallback: 'on' | 'off'): boolean {
  const raw = process.env[name] ?? '';
  if (raw !== '' && raw !== 'on' && raw !== 'off') {
    process.stderr.write(`bench: ${name} must be on or off, got ${raw}\n`);
    process.exit(2);
  }
  return (raw || fallback) === 'on';
}

export const QUICK = flag('--quick');
export const SOAK = flag('--soak-memory') || (process.env['BENCH_MEMORY_SECONDS'] ?? '') !== '';
export const WRITE = !flag('--no-write') && !QUICK;
export const SECONDS = envNumber('BENCH_SECONDS', QUICK ? 3 : 10, 1, 600);
/** Load before each measured window (the same scenario, the same target). */
export const WARMUP_SECONDS = envNumber('BENCH_WARMUP_SECONDS', QUICK ? 1 : 2, 0, 600);
/** Once per target, right after it starts: 1-s slices of every scenario in turn, so the JIT has settled before any window. */
export const START_WARMUP_SECONDS = Math.round(envNumber('BENCH_START_WARMUP_SECONDS', QUICK ? 5 : 30, 0, 3600));
export const ROUNDS = Math.round(envNumber('BENCH_ROUNDS', QUICK ? 1 : 3, 1, 50));
export const CONNECTIONS = Math.round(envNumber('BENCH_CONNECTIONS', 32, 1, 1024));
export const TTFE_REQUESTS = Math.round(envNumber('BENCH_TTFE_REQUESTS', QUICK ? 50 : 200, 10, 100_000));
export const TTFE_WARMUP = 20;
export const MEMORY_SECONDS = Number(flagValue('--soak-memory') ?? envNumber('BENCH_MEMORY_SECONDS', 300, 10, 24 * 3600));
export const MEMORY_WARMUP_SECONDS = envNumber('BENCH_MEMORY_WARMUP_SECONDS', 30, 0, 3600);
export const MEMORY_SAMPLE_SECONDS = 5;
export const MAX_OTHER_CPU = envNumber('BENCH_MAX_OTHER_CPU', 15, 0, 10_000) / 100;
export const RETRIES = Math.round(envNumber('BENCH_RETRIES', QUICK ? 0 : 2, 0, 10));
export const PIN = envSwitch('BENCH_PIN', 'on') && os.cpus().length >= 2 && hasTaskset();
export const TARGET_CPUS = '0';
export const OTHER_CPUS = `1-${os.cpus().length - 1}`;

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The command that reproduces this run: its BENCH_* settings, then the npm script or the tsx line. */
export function commandLine(): string {
  const settings = Object.keys(process.env)
    .filter((name) => name.startsWith('BENCH_'))
    .sort()
    .map((name) => `${name}=${process.env[name]}`);
  const npm = process.env['npm_lifecycle_event'];
  const base = npm === 'bench' || npm === 'bench:quick' ? `npm run ${npm}` : 'npx tsx scripts/bench/bench.ts';
  const args = npm === 'bench:quick' ? argv.filter((arg) => arg !== '--quick') : argv;
  return [...settings, base, ...(args.length ? (npm ? ['--', ...args] : args) : [])].join(' ');
}
