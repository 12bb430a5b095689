// Messages between bench.ts (the orchestrator) and load-generator.ts (its child that makes all the requests).

/** The bench caller's key (bench-routes.yaml `callers.bench-team`, and `npm run bench:callers`); never a real one. */
export const BENCH_CALLER_KEY = 'crg_bench-caller-key-0123456789abcdefghijklmnopqrstu';
/** The key of bench-routes.yaml `callers.bench-open` (no limits, no budget): `npm run bench:latency` compares the two callers. */
export const BENCH_OPEN_CALLER_KEY = 'crg_bench-open-caller-key-0123456789abcdefghijklmn';
/** Sent with every bench request to every target (the proxies ignore it), so the gateway admits and settles its caller. */
export const CALLER_HEADERS: Readonly<Record<string, string>> = { authorization: `Bearer ${BENCH_CALLER_KEY}` };

/** Which answer a request expects; checked on every response. */
export interface Expectation {
  /** The `model` every answer (every stream chunk) must carry: the routing string through the gateway, the upstream name through the raw proxy. */
  readonly model: string;
}

/** autocannon at a fixed concurrency: a warm-up, then a measured window around which /proc is read. */
export interface LoadCommand {
  readonly type: 'load';
  readonly url: string;
  /** The request bodies, sent in turn by every connection (one body for the comparison, a mix for the soak). */
  readonly bodies: readonly string[];
  readonly connections: number;
  readonly warmupSeconds: number;
  readonly seconds: number;
  /** The process whose CPU is measured. */
  readonly targetPid: number;
  /** Every process of the bench (for the CPU used by others on the machine during the window). */
  readonly benchPids: readonly number[];
  readonly expect: Expectation;
  /** Keep every response time for percentiles (off for long soaks). */
  readonly keepLatencies: boolean;
}

export interface LoadResult {
  readonly requests: number;
  readonly elapsedMs: number;
  readonly targetCpuTicks: number;
  /** Busy CPU ticks of the whole machine in the window not spent by any bench process. */
  readonly foreignCpuTicks: number;
  /** CPU ticks of the bench's other processes in the window (load generator, mock provider, orchestrator). */
  readonly loadSideCpuTicks: number;
  readonly ticksPerSecond: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  readonly bytes: number;
  readonly warmupRequests: number;
  readonly problems: Problems;
}

export interface Problems {
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  readonly mismatches: number;
  /** The first response that failed its check, cut short. */
  readonly sample: string | null;
}

/**
 * One request at a time, for time to first event (first body byte) and a full check of every answer.
 * With several targets the requests alternate between them (A, B, A, B, …), so whatever else happens on
 * the machine meanwhile hits every target alike.
 */
export interface SequentialCommand {
  readonly type: 'sequential';
  readonly targets: ReadonlyArray<{ readonly url: string; readonly expect: Expectation }>;
  readonly body: string;
  /** Requests per target before the measured ones. */
  readonly warmup: number;
  /** Measured requests per target. */
  readonly count: number;
  /** For a stream: the number of chunk events before [DONE] the caller must get. */
  readonly events: number | null;
  readonly benchPids: readonly number[];
}

export interface SequentialResult {
  /** Time from sending the request to the first body byte holding `data:` (streams) or the first body byte (JSON). */
  readonly firstByteP50Ms: number;
  readonly firstByteP99Ms: number;
  readonly totalP50Ms: number;
  readonly count: number;
  /** Measured answers per x-gateway-served-by value (the gateway's endpoint); empty for the proxies. */
  readonly servedBy: Readonly<Record<string, number>>;
}

export interface SequentialResults {
  /** In the order of the command's targets. */
  readonly perTarget: readonly SequentialResult[];
  readonly elapsedMs: number;
  readonly foreignCpuTicks: number;
  readonly ticksPerSecond: number;
}

export type Command = (LoadCommand | SequentialCommand) & { readonly id: number };
export type Reply = { readonly id: number; readonly ok: true; readonly result: LoadResult | SequentialResults } | { readonly id: number; readonly ok: false; readonly error: string };

/**
 * The cheap check made on every response under load (full checks are made by the sequential client):
 * JSON answers carry the expected model; streams start with a data event, carry the model and end with [DONE].
 */
export function quickCheck(expect: Expectation): (body: string) => boolean {
  const needle = `"model":"${expect.model}"`;
  return (body) => {
    if (body.startsWith('{')) return body.endsWith('}') && body.includes(needle);
    return body.startsWith('data: {') && body.endsWith('data: [DONE]\n\n') && body.includes(needle);
  };
}
