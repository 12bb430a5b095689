// The client of `npm run bench:latency`: one raw node:http keep-alive socket per target, one request at a time,
// timed with process.hrtime.bigint from the moment the request is written to the answer's end (non-streamed) or its
// first body byte holding an event (streamed). Nothing else runs in this process while it measures, and every answer
// is checked after its time is taken (status, model, [DONE]), so a wrong answer never counts as a fast one.
import { Agent, request } from 'node:http';

export interface LatencyTarget {
  readonly name: string;
  readonly url: string;
  /** Headers of every request (the gateway's caller key; the proxies ignore it). */
  readonly headers: Readonly<Record<string, string>>;
  /** The model every answer must carry. */
  readonly model: string;
}

/** One target's client: its own agent with one socket, so the connection is set up once and reused. */
export interface TimedClient {
  readonly target: LatencyTarget;
  /** Microseconds to the answer's end (`stream` false) or to the first event (`stream` true). */
  time(body: Buffer, stream: boolean): Promise<number>;
  close(): void;
}

export function timedClient(target: LatencyTarget): TimedClient {
  const url = new URL(target.url);
  const agent = new Agent({ keepAlive: true, maxSockets: 1, maxFreeSockets: 1 });
  const needle = `"model":"${target.model}"`;
  return {
    target,
    close: () => agent.destroy(),
    time: (body, stream) =>
      new Promise<number>((resolve, reject) => {
        let first = 0n;
        const started = process.hrtime.bigint();
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': body.length, ...target.headers },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => {
              if (first === 0n && stream && chunk.includes('data:')) first = process.hrtime.bigint();
              chunks.push(chunk);
            });
            res.on('end', () => {
              const ended = process.hrtime.bigint();
              const text = Buffer.concat(chunks).toString();
              const whole = stream ? text.startsWith('data: {') && text.endsWith('data: [DONE]\n\n') : text.startsWith('{') && text.endsWith('}');
              if (res.statusCode !== 200 || !whole || !text.includes(needle)) {
                reject(new Error(`${target.name}: unexpected answer ${res.statusCode}: ${text.slice(0, 300)}`));
                return;
              }
              resolve(Number((stream ? first : ended) - started) / 1000);
            });
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(body);
      }),
  };
}

/** The p-th percentile (0..100) of sorted values, nearest rank. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * The order of one round: every client once, shuffled (a seeded xorshift, so a run can be repeated). A fixed
 * rotation kept each target's predecessor fixed: the gateway's second caller always came right after the gateway's
 * first, on a process still warm from it, and measured ~100 µs faster at p50 for that alone (2026-11-28). Shuffled,
 * every target follows every other alike.
 */
export function roundOrder(count: number, round: number): number[] {
  const order = Array.from({ length: count }, (_, i) => i);
  let state = (round + 1) * 0x9e3779b1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  for (let i = count - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/**
 * `rounds` rounds; each sends one request to every client in turn, in a shuffled order (roundOrder), so whatever
 * else the machine does meanwhile, and which target ran just before, hits every target alike. Returns each
 * client's times, sorted.
 */
export async function interleaved(clients: readonly TimedClient[], body: Buffer, stream: boolean, rounds: number): Promise<number[][]> {
  const times = clients.map(() => [] as number[]);
  for (let round = 0; round < rounds; round++) {
    for (const i of roundOrder(clients.length, round)) times[i]!.push(await clients[i]!.time(body, stream));
  }
  return times.map((each) => each.sort((a, b) => a - b));
}
