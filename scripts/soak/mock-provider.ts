// The soak's provider: an OpenAI-compatible node:http server that, per request, picks a behaviour from a
// weighted mix of healthy answers and faults, and keeps a plan of what it did (keyed by x-request-id) so
// each caller's answer can be checked against the fault it met.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { chance, pick, pickWeighted, randomInt, type SoakModel } from './common.js';
import { drained } from '../bench/drained.js';

/** Behaviours for non-streamed requests, with their weights. */
export const JSON_FAULTS = {
  json_ok: 55,
  http_429: 6,
  http_500: 6,
  reset_before: 5,
  stall_headers: 3,
  json_garbage: 6,
  json_reset_body: 5,
  json_stall_body: 3,
} as const;

/** Behaviours for streamed requests, with their weights. */
export const STREAM_FAULTS = {
  sse_ok: 45,
  sse_garbage_lines: 6,
  http_429: 4,
  http_500: 4,
  reset_before: 4,
  stall_headers: 2,
  sse_wrong_type: 4,
  sse_reset_mid: 5,
  sse_fin_mid: 4,
  sse_close_no_done: 5,
  sse_stall_first: 2,
  sse_stall_mid: 3,
  sse_error_event: 5,
} as const;

export type FaultKind = keyof typeof JSON_FAULTS | keyof typeof STREAM_FAULTS;

/** What the provider did with one request. Times are performance.now() of the soak process. */
export interface ProviderPlan {
  readonly requestId: string;
  readonly kind: FaultKind;
  readonly stream: boolean;
  /** The provider was asked for usage in the stream (stream_options.include_usage) and sends it. */
  readonly usage: boolean;
  /** Anything wrong with the request as it arrived (model, key, stream_options). */
  readonly problems: string[];
  /** The answer's whole content: a successful answer carries it all, a broken stream a prefix of it. */
  content: string;
  /** The provider_code the gateway's envelope must carry, where this behaviour determines it. */
  providerCode: string | null | undefined;
  readonly receivedAt: number;
  /** When the provider took its last deliberate step: finished, broke the connection, or began to stall. */
  doneAt: number | undefined;
  /** When the response closed, and whether it had been sent in full by then. */
  closedAt: number | undefined;
  finished: boolean;
  /** A stall the gateway never ended: the mock gave up after its cap. */
  stallCapHit: boolean;
}

export interface MockProvider {
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  readonly port: number;
  plan(requestId: string): ProviderPlan | undefined;
  forget(requestId: string): void;
  /** Behaviours picked since the last reset, by kind, for non-streamed and streamed requests. */
  injected(): ReadonlyMap<FaultKind, { json: number; stream: number }>;
  resetCounts(): void;
  /** TCP connections the gateway holds open to the mock (idle keep-alive ones included). */
  openConnections(): number;
  /** Requests the mock is still answering (or stalling). */
  activeExchanges(): number;
  /** Errors thrown by the mock's own code (bugs of the soak, not faults it meant to inject). */
  failures(): readonly string[];
  close(): Promise<void>;
}

export interface MockProviderOptions {
  readonly models: readonly SoakModel[];
  /** A stall lasts until the gateway gives up, but never longer than this. */
  readonly stallCapMs: number;
}

interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly plan: ProviderPlan;
  readonly upstreamModel: string;
  readonly stallCapMs: number;
}

export async function startMockProvider(options: MockProviderOptions): Promise<MockProvider> {
  const byUpstream = new Map(options.models.map((model) => [model.upstream, model]));
  const plans = new Map<string, ProviderPlan>();
  const injected = new Map<FaultKind, { json: number; stream: number }>();
  const sockets = new Set<Socket>();
  const failures: string[] = [];
  let active = 0;
  let anonymous = 0;

  const server = createServer((req, res) => {
    active++;
    handle(req, res)
      .catch((error: unknown) => {
        // A bug in the soak itself, not a fault it meant: reported, and it fails the run.
        failures.push(error instanceof Error ? (error.stack ?? error.message) : String(error));
        res.destroy();
      })
      .finally(() => active--);
  });
  // Idle keep-alive connections stay open for the whole soak, so what the gateway's pool holds at the end shows.
  server.keepAliveTimeout = 30_000;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const receivedAt = performance.now();
    const requestId = typeof req.headers['x-request-id'] === 'string' ? req.headers['x-request-id'] : `anonymous-${++anonymous}`;
    const problems: string[] = [];
    let body: { model?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown } | null; metadata?: { soak_usage?: unknown; soak_fault?: unknown } } = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
    } catch {
      problems.push('the body is not JSON');
    }
    const stream = body.stream === true;
    const usage = stream && body.stream_options?.include_usage === true;
    const model = typeof body.model === 'string' ? byUpstream.get(body.model) : undefined;
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') problems.push(`${req.method} ${req.url}`);
    if (!model) problems.push(`unknown upstream model ${JSON.stringify(body.model)}`);
    if (model && (req.headers.authorization ?? null) !== model.authorization) problems.push('wrong Authorization header');
    // The caller says in metadata (an unknown field, forwarded untouched) whether it asked for usage itself.
    const callerAsked = body.metadata?.soak_usage;
    if (typeof callerAsked !== 'boolean') problems.push('metadata.soak_usage did not come through');
    if (model && stream && model.streamUsage && !usage) problems.push('a stream_usage provider was not asked for usage');
    if (model && stream && !model.streamUsage && usage !== callerAsked) problems.push("a stream_usage:false provider did not get the caller's stream_options");
    if (requestId.startsWith('anonymous-')) problems.push('no x-request-id');

    // A caller may name the behaviour (the abandoned-caller phases need a provider slow at a given point).
    const named = body.metadata?.soak_fault;
    const faults: Readonly<Record<string, number>> = stream ? STREAM_FAULTS : JSON_FAULTS;
    const kind: FaultKind = typeof named === 'string' && named in faults ? (named as FaultKind) : stream ? pickWeighted(STREAM_FAULTS) : pickWeighted(JSON_FAULTS);
    const count = injected.get(kind) ?? { json: 0, stream: 0 };
    if (stream) count.stream++;
    else count.json++;
    injected.set(kind, count);
    const plan: ProviderPlan = {
      requestId,
      kind,
      stream,
      usage,
      problems,
      content: '',
      providerCode: undefined,
      receivedAt,
      doneAt: undefined,
      closedAt: undefined,
      finished: false,
      stallCapHit: false,
    };
    plans.set(requestId, plan);
    res.once('close', () => {
      plan.closedAt = performance.now();
      plan.finished = res.writableFinished;
    });
    const exchange: Exchange = { req, res, plan, upstreamModel: typeof body.model === 'string' ? body.model : '', stallCapMs: options.stallCapMs };
    try {
      await BEHAVIOURS[kind](exchange);
    } finally {
      plan.doneAt ??= performance.now();
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    plan: (requestId) => plans.get(requestId),
    forget: (requestId) => void plans.delete(requestId),
    injected: () => injected,
    resetCounts: () => injected.clear(),
    openConnections: () => sockets.size,
    activeExchanges: () => active,
    failures: () => failures,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const BEHAVIOURS: Record<FaultKind, (exchange: Exchange) => Promise<void>> = {
  async json_ok(ex) {
    const content = contentPieces(randomInt(1, 12)).join('');
    ex.plan.content = content;
    const bytes = Buffer.from(completion(ex, content));
    await sleep(randomInt(0, 200)); // "thinking"
    ex.res.writeHead(200, { 'content-type': 'application/json' });
    if (chance(0.3)) {
      // In two reads cut at any byte (inside a UTF-8 character too), so the gateway sees the body arrive in pieces.
      const cut = randomInt(1, bytes.length - 1);
      ex.res.write(bytes.subarray(0, cut));
      await sleep(randomInt(1, 20));
      ex.res.end(bytes.subarray(cut));
    } else {
      ex.res.end(bytes);
    }
  },

  async http_429(ex) {
    await sleep(randomInt(0, 50));
    ex.plan.providerCode = 'rate_limit_exceeded';
    ex.res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
    ex.res.end(JSON.stringify({ error: { message: 'Rate limit reached for soak', type: 'requests', param: null, code: 'rate_limit_exceeded' } }));
  },

  async http_500(ex) {
    await sleep(randomInt(0, 50));
    if (chance(0.5)) {
      ex.plan.providerCode = 'server_error'; // no code: the type stands in
      ex.res.writeHead(500, { 'content-type': 'application/json' });
      ex.res.end(JSON.stringify({ error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } }));
    } else {
      ex.plan.providerCode = null;
      ex.res.writeHead(500, { 'content-type': 'text/html' });
      ex.res.end('<html><body>500 Internal Server Error</body></html>');
    }
  },

  async reset_before(ex) {
    await sleep(randomInt(0, 50));
    ex.req.socket.resetAndDestroy();
  },

  stall_headers: stall,

  async json_garbage(ex) {
    await sleep(randomInt(0, 50));
    const [type, body] = pick([
      ['text/plain', 'upstream says hello'],
      ['application/json', '{"id":"chatcmpl-broken","choices":['],
      ['application/json', '[{"id":"an array, not an object"}]'],
      ['application/json', ''],
      ['text/html', '<html>Bad gateway</html>'],
    ] as const);
    ex.res.writeHead(200, { 'content-type': type });
    ex.res.end(body);
  },

  async json_reset_body(ex) {
    const bytes = Buffer.from(completion(ex, contentPieces(randomInt(4, 12)).join('')));
    ex.res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
    ex.res.write(bytes.subarray(0, bytes.length >> 1));
    await sleep(50);
    ex.req.socket.resetAndDestroy();
  },

  async json_stall_body(ex) {
    const bytes = Buffer.from(completion(ex, contentPieces(randomInt(4, 12)).join('')));
    ex.res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
    ex.res.write(bytes.subarray(0, bytes.length >> 1));
    await stall(ex);
  },

  async sse_ok(ex) {
    const script = streamScript(ex);
    startStream(ex);
    if (await send(ex, script.frames)) ex.res.end(script.done);
  },

  async sse_garbage_lines(ex) {
    const script = streamScript(ex);
    const frames = [...script.frames];
    for (let i = randomInt(2, 6); i > 0; i--) frames.splice(randomInt(1, frames.length), 0, pick(GARBAGE_FRAMES));
    startStream(ex);
    if (await send(ex, frames)) ex.res.end(script.done);
  },

  async sse_wrong_type(ex) {
    const text = completion(ex, contentPieces(randomInt(1, 6)).join(''));
    await sleep(randomInt(0, 50));
    ex.res.writeHead(200, { 'content-type': 'application/json' });
    ex.res.end(text);
  },

  async sse_reset_mid(ex) {
    if (!(await sendSome(ex))) return;
    await sleep(50); // let the events reach the gateway before the reset
    ex.req.socket.resetAndDestroy();
  },

  async sse_fin_mid(ex) {
    if (!(await sendSome(ex))) return;
    await sleep(50);
    ex.req.socket.destroy(); // FIN: the chunked body never gets its last chunk
  },

  async sse_close_no_done(ex) {
    const script = streamScript(ex);
    startStream(ex);
    // Sometimes every event but [DONE], sometimes only the first few: either way the HTTP response ends cleanly.
    const frames = chance(0.5) ? script.frames : script.frames.slice(0, randomInt(1, script.frames.length - 1));
    if (await send(ex, frames)) ex.res.end();
  },

  async sse_stall_first(ex) {
    streamScript(ex);
    startStream(ex);
    await stall(ex);
  },

  async sse_stall_mid(ex) {
    if (await sendSome(ex)) await stall(ex);
  },

  async sse_error_event(ex) {
    if (!(await sendSome(ex))) return;
    const numeric = chance(0.5);
    ex.plan.providerCode = numeric ? '502' : 'server_error';
    const error = numeric
      ? { message: 'Provider returned error', code: 502, metadata: { provider_name: 'Soak' } }
      : { message: 'The model overloaded', type: 'server_error', code: 'server_error' };
    ex.res.write(`data: ${JSON.stringify({ id: 'gen-soak', object: 'chat.completion.chunk', error })}\n\n`);
    await sleep(randomInt(0, 20));
    ex.res.end(chance(0.5) ? 'data: [DONE]\n\n' : '');
  },
};

/** Data lines the gateway must pass on as they are (or, for a JSON object, with model set). */
const GARBAGE_FRAMES = [
  'data: not json at all\n\n',
  'data: {"broken": \n\n',
  'data: [1,2,3]\n\n',
  'data: 42\n\n',
  'data: "a string"\n\n',
  'data: {"note":"an object without a model"}\n\n',
  ': keep-alive\n\n',
  'event: ping\ndata: {}\n\n',
];

/** Text the provider "generates": multi-byte characters, escapes, and whole values that look like keys the gateway scans for. */
const WORDS = ['soak', ' gateway', ' héllo', ' 世界', ' 🙂', ' "quoted"', ' back\\slash', '\nnew line', ' tab\t', 'model', 'error', 'usage', ' [DONE]', ' data: x'];

function contentPieces(count: number): string[] {
  return Array.from({ length: count }, () => Array.from({ length: randomInt(1, 3) }, () => pick(WORDS)).join(''));
}

function completion(ex: Exchange, content: string): string {
  const head = { id: `chatcmpl-${ex.plan.requestId}`, object: 'chat.completion', created: 1_763_700_000 };
  const choices = [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }];
  const usage = { prompt_tokens: 9, completion_tokens: content.length, total_tokens: 9 + content.length };
  // model first (as OpenAI sends it) or last: the gateway rewrites it wherever it stands.
  const answer = chance(0.7)
    ? { ...head, model: ex.upstreamModel, choices, usage, system_fingerprint: 'fp_soak' }
    : { ...head, choices, usage, system_fingerprint: 'fp_soak', model: ex.upstreamModel };
  return JSON.stringify(answer);
}

/** A whole OpenAI stream (role chunk, 20-200 content chunks, finish chunk, usage chunk if asked), and its [DONE]. */
function streamScript(ex: Exchange): { frames: string[]; done: string } {
  const eol = chance(0.1) ? '\r\n' : '\n';
  const pieces = contentPieces(randomInt(20, 200));
  ex.plan.content = pieces.join('');
  const base = { id: `chatcmpl-${ex.plan.requestId}`, object: 'chat.completion.chunk', created: 1_763_700_000, model: ex.upstreamModel, system_fingerprint: 'fp_soak' };
  const usageNull = ex.plan.usage ? { usage: null } : {};
  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...usageNull,
  });
  const frame = (event: unknown) => `data: ${JSON.stringify(event)}${eol}${eol}`;
  const frames = [frame(chunk({ role: 'assistant', content: '' }, null)), ...pieces.map((content) => frame(chunk({ content }, null))), frame(chunk({}, 'stop'))];
  if (chance(0.2)) frames.unshift(`: OPENROUTER PROCESSING${eol}${eol}`);
  if (chance(0.1)) frames.splice(2, 0, `event: message${eol}id: 7${eol}retry: 1000${eol}data: ${JSON.stringify(chunk({ content: '' }, null))}${eol}${eol}`);
  if (ex.plan.usage) {
    frames.push(frame({ ...base, choices: [], usage: { prompt_tokens: 9, completion_tokens: pieces.length, total_tokens: 9 + pieces.length } }));
  }
  return { frames, done: `data: [DONE]${eol}${eol}` };
}

function startStream(ex: Exchange): void {
  const type = pick(['text/event-stream', 'text/event-stream; charset=utf-8', 'text/event-stream', undefined]);
  ex.res.writeHead(200, type ? { 'content-type': type, 'cache-control': 'no-cache' } : { 'cache-control': 'no-cache' });
  ex.res.flushHeaders();
}

/** The stream's start and some of its events (at least one data event, so the fault comes after the stream committed). */
async function sendSome(ex: Exchange): Promise<boolean> {
  const script = streamScript(ex);
  startStream(ex);
  const firstData = script.frames[0]!.startsWith(':') ? 2 : 1;
  return send(ex, script.frames.slice(0, randomInt(firstData, script.frames.length - 1)));
}

/**
 * Writes frames one by one, with short pauses now and then, and now and then a frame cut in two at any byte
 * (inside a line or a UTF-8 character); false when the gateway went away.
 */
async function send(ex: Exchange, frames: readonly string[]): Promise<boolean> {
  for (const frame of frames) {
    const bytes = Buffer.from(frame);
    const pieces = chance(0.1) ? [bytes.subarray(0, bytes.length >> 1), bytes.subarray(bytes.length >> 1)] : [bytes];
    for (const piece of pieces) {
      if (ex.res.destroyed) return false;
      if (!ex.res.write(piece) && !(await drained(ex.res))) return false;
      if (pieces.length > 1) await sleep(1);
    }
    if (chance(0.3)) await sleep(randomInt(1, 25));
  }
  return !ex.res.destroyed;
}

/** Says nothing more until the gateway gives up (closes the connection), or the cap runs out. */
async function stall(ex: Exchange): Promise<void> {
  ex.plan.doneAt = performance.now();
  if (ex.res.destroyed) return;
  const closed = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => {
      ex.res.off('close', onClose);
      resolve(false);
    }, ex.stallCapMs);
    const onClose = () => {
      clearTimeout(timer);
      resolve(true);
    };
    ex.res.once('close', onClose);
  });
  if (!closed) {
    ex.plan.stallCapHit = true;
    ex.req.socket.destroy();
  }
}
