/** The most V8's young generation (each of its two semi-spaces) may grow to in a worker, MiB. */
export const WORKER_SEMI_SPACE_MIB = 16;
/** Any of V8's semi-space options, spelled with dashes or underscores. */
const SIZES_THE_YOUNG_GENERATION = /^--(?:max[-_]|min[-_])?semi[-_]space/;

/**
 * Node's options for the workers: the primary's own, and a young generation capped at 16 MiB unless the operator
 * sized it (in node's arguments or NODE_OPTIONS, which then decide). Under 10,000 open streams V8 grows it to
 * 64 MiB, and each collection of it copies what the streams opened since the last one hold: 35–44 ms pauses
 * while streams open, and ~12 KiB of RSS per stream for the space itself. A busy non-streamed load grows it to
 * 16 MiB and no further, so that load is served as before (docs/performance.md).
 */
export function workerExecArgv(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)];
  if (given.some((option) => SIZES_THE_YOUNG_GENERATION.test(option))) return [...execArgv];
  return [...execArgv, `--max-semi-space-size=${WORKER_SEMI_SPACE_MIB}`];
}
