import cluster, { type Worker } from 'node:cluster';
import type { Request, RequestHandler, Response } from 'express';
import { AggregatorRegistry, Counter, Gauge, Registry, type CounterConfiguration, type Metric } from 'prom-client';
import { pricedUsage, type RequestRecord } from './request-log.js';
import { CounterTally, HistogramTally } from './tallies.js';
import { registerProcessMetrics } from './process-metrics.js';

/**
 * Prometheus metrics of one gateway, read from the same record as the request's log line.
 *
 * Labels only ever hold values from the compiled tables (roster models, provider ids, gateway codes),
 * HTTP statuses and booleans: never a string the caller chose, so a caller cannot grow the series.
 */
export interface GatewayMetrics {
  /** Called once per request when its response closes (see requestLog). */
  readonly observe: (record: RequestRecord, req: Request, res: Response, durationMs: number) => void;
  /** GET /metrics: this process's figures, or in a cluster worker those of every worker. */
  readonly handler: RequestHandler;
}

export interface MetricsOptions {
  /** Requests being answered right now, read at scrape time. */
  readonly inFlight: () => number;
  /** Every provider, whose endpoints' breakers are read at scrape time. */
  readonly providers?: readonly ObservedProvider[];
  /** Log lines dropped because stdout stalled, read at scrape time; absent: the metric reads 0. */
  readonly logLinesDropped?: (() => number) | undefined;
  /** Node's process metrics (CPU, memory, event loop, GC): they observe the whole process, so only one gateway per process should. */
  readonly processMetrics: boolean;
  /** In a cluster worker: /metrics asks the primary for the figures of every worker (see serveClusterMetrics). */
  readonly clusterWorker: boolean;
  /** With REDIS_URL: 1 while the callers' limit store answers, 0 while counts are kept in the process instead. */
  readonly limitStoreUp?: () => number;
  /** Callers' spend and budgets, read at scrape time; absent: no spend gauges. */
  readonly callerSpend?: CallerSpend;
  /** With OpenTelemetry on: spans dropped because the queue to the collector was full, read at scrape time. */
  readonly spansDropped?: () => number;
  /** Each deprecated roster model and its sunset date (YYYY-MM-DD, midnight UTC), for alerts on who still calls it. */
  readonly sunsets?: readonly { readonly model: string; readonly sunset: string }[];
}

/** One figure of a caller's spend or budget in a UTC period. */
export interface SpendSample {
  readonly caller: string;
  readonly period: 'day' | 'month';
  readonly usd: number;
}

/** What the spend gauges read (policy's callerSpend has this shape): the store that counts, its budgets, its reading. */
export interface CallerSpend {
  readonly store: 'redis' | 'memory';
  readonly budgets: readonly SpendSample[];
  /** Bounded in time: a store that does not answer gives its last reading. */
  read(): Promise<readonly SpendSample[]>;
}

const BREAKER_STATES = ['closed', 'open', 'half_open'] as const;

/** What the breaker gauge reads of a provider (routing's RuntimeProvider has this shape; observation imports nothing of routing). */
export interface ObservedProvider {
  readonly id: string;
  readonly endpoints: readonly { readonly name: string; readonly breaker: { readonly state: string } }[];
}

/** Seconds, from a quick answer to a long reasoning completion. */
const LLM_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];

/** Probes and scrapes are not traffic: counting them would mostly count the monitoring. */
const OPERATIONAL_PATHS = new Set(['/health', '/metrics']);

/** How long a worker waits for the primary; prom-client's own wait for the workers is 5 s. */
const CLUSTER_METRICS_TIMEOUT_MS = 7000;

const METRICS_REQUEST = 'chat-routing-gateway:metrics-request';
const METRICS_REPLY = 'chat-routing-gateway:metrics-reply';

interface MetricsRequest {
  readonly type: typeof METRICS_REQUEST;
  readonly id: number;
}

interface MetricsReply {
  readonly type: typeof METRICS_REPLY;
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}

export function createMetrics(options: MetricsOptions): GatewayMetrics {
  // In a worker, an AggregatorRegistry answers the primary's requests for this registry's figures.
  const registry = options.clusterWorker ? new AggregatorRegistry() : new Registry();
  if (options.clusterWorker) AggregatorRegistry.setRegistries(registry);
  if (options.processMetrics) registerProcessMetrics(registry);
  const registers = [registry];
  // Per-request series are tallies (tallies.ts): prom-client reads them at scrape time only.
  const tally = <T extends CounterTally | HistogramTally>(metric: T): T => {
    registry.registerMetric(metric as unknown as Metric);
    return metric;
  };

  const requests = tally(new CounterTally('gateway_requests_total', 'Requests answered, by roster model, provider, HTTP status, gateway_code (empty on success; a stream failing after its 200 has the code of its final event) and caller (a routes.yaml caller, key, anonymous, or empty when no key was accepted).', ['model', 'provider', 'status', 'gateway_code', 'caller']));
  const duration = tally(new HistogramTally('gateway_request_duration_seconds', 'From the request arriving to its response closing.', ['model', 'provider', 'stream'], LLM_BUCKETS));
  const upstreamHeaders = tally(new HistogramTally('gateway_upstream_headers_seconds', "From sending a request upstream to the provider's response headers.", ['provider'], LLM_BUCKETS));
  const firstEvent = tally(new HistogramTally('gateway_first_event_seconds', 'Streams: from the request arriving to the first event relayed.', ['provider'], LLM_BUCKETS));
  const tokens = tally(new CounterTally('gateway_tokens_total', "Tokens of the answers, by roster model and kind (prompt, completion, cached, reasoning): the providers' usage, or the gateway's estimate for an answer without (usage_estimated in its log line).", ['model', 'kind']));
  const cost = tally(new CounterTally('gateway_cost_usd_total', "USD of the answers, priced from their usage and the serving model's routes.yaml price, by caller and roster model.", ['caller', 'model']));
  const limitStoreUp = options.limitStoreUp;
  if (limitStoreUp) {
    new Gauge({
      name: 'gateway_limit_store_up',
      help: "1 while Redis (REDIS_URL) counts the callers' limits and spend, 0 while they are counted in the process instead; the lowest over workers.",
      registers,
      aggregator: 'min',
      collect() {
        this.set(limitStoreUp());
      },
    });
  }
  new Gauge({
    name: 'gateway_requests_in_flight',
    help: 'Requests being answered (the ones a drain waits for); scrapes are not counted.',
    registers,
    collect() {
      this.set(options.inFlight());
    },
  });

  countedElsewhere(registers, 'gateway_log_lines_dropped_total', 'Log lines dropped because stdout did not take them and 8 MiB were already waiting (docs/observability.md).', options.logLinesDropped ?? (() => 0));

  const attempts = tally(new CounterTally('gateway_upstream_attempts_total', 'Upstream attempts (failover included), by provider, endpoint and outcome (ok, the provider HTTP status, or the gateway code of a transport failure).', ['provider', 'endpoint', 'outcome']));
  const offRoster = tally(new CounterTally('gateway_off_roster_requests_total', 'Requests refused for a model not on the roster (unknown_model, missing_provider_prefix), by the prefix before the first "/" when it names a configured provider, else other.', ['prefix']));
  const providerIds = new Set((options.providers ?? []).map((provider) => provider.id));
  const endpoints = (options.providers ?? []).flatMap((provider) => provider.endpoints.map((endpoint) => ({ provider: provider.id, endpoint })));
  new Gauge({
    name: 'gateway_endpoint_breaker_state',
    help: "1 for each endpoint's current breaker state (closed, open, half_open), 0 for the others; summed over workers in a cluster, the number of workers that see it so.",
    labelNames: ['provider', 'endpoint', 'state'] as const,
    registers,
    collect() {
      for (const { provider, endpoint } of endpoints) {
        const state = endpoint.breaker.state;
        for (const each of BREAKER_STATES) this.labels(provider, endpoint.name, each).set(each === state ? 1 : 0);
      }
    },
  });

  if (options.callerSpend) spendGauges(registers, options.callerSpend);

  const deprecatedRequests = tally(new CounterTally('gateway_deprecated_requests_total', 'Requests to deprecated roster models (routes.yaml deprecated), by model and caller: who still calls before the removal.', ['model', 'caller']));
  const sunsets = options.sunsets ?? [];
  if (sunsets.length > 0) {
    const sunset = new Gauge({
      name: 'gateway_model_sunset_timestamp_seconds',
      help: 'Unix time of the sunset (routes.yaml deprecated.sunset, midnight UTC) of each deprecated roster model: with gateway_deprecated_requests_total, who still calls a model about to go.',
      labelNames: ['model'] as const,
      registers,
      // The same figure in every worker: summing would multiply it.
      aggregator: 'max',
    });
    for (const each of sunsets) sunset.labels(each.model).set(Date.parse(`${each.sunset}T00:00:00Z`) / 1000);
  }
  if (options.spansDropped) {
    countedElsewhere(registers, 'gateway_trace_spans_dropped_total', 'Spans dropped, not exported, because the queue to the OpenTelemetry collector was full (a collector down or slow).', options.spansDropped);
  }

  function countTokens(model: string, kind: string, count: number | null): void {
    // Only non-negative safe integers reach here (readTokenCounts; the request log reports the others).
    if (count !== null && count > 0) tokens.inc([model, kind], count);
  }

  function observe(record: RequestRecord, req: Request, res: Response, durationMs: number): void {
    if (OPERATIONAL_PATHS.has(req.path)) return;
    const provider = record.provider ?? '';
    // record.model is the caller's string until the roster accepted it, which is when provider is set.
    const model = record.provider !== null ? (record.model ?? '') : '';
    const caller = record.caller ?? '';
    requests.inc([model, provider, String(res.statusCode), record.gatewayCode ?? '', caller]);
    const { costUsd, tokens } = pricedUsage(record);
    if (costUsd !== null && costUsd > 0) cost.inc([caller, model], costUsd);
    if (record.deprecated) deprecatedRequests.inc([model, caller]);
    duration.observe([model, provider, record.stream ? 'true' : 'false'], durationMs / 1000);
    if (record.upstreamHeadersMs !== null) upstreamHeaders.observe([provider], record.upstreamHeadersMs / 1000);
    if (record.firstEventMs !== null) firstEvent.observe([provider], record.firstEventMs / 1000);
    if (record.gatewayCode === 'unknown_model' || record.gatewayCode === 'missing_provider_prefix') {
      const prefix = record.model?.split('/', 1)[0] ?? '';
      offRoster.inc([record.model?.includes('/') && providerIds.has(prefix) ? prefix : 'other']);
    }
    if (record.attempts) for (const attempt of record.attempts) attempts.inc([attempt.provider, attempt.endpoint, attempt.outcome]);
    const { counts } = tokens;
    countTokens(model, 'prompt', counts.prompt);
    countTokens(model, 'completion', counts.completion);
    countTokens(model, 'cached', counts.cached);
    countTokens(model, 'reasoning', counts.reasoning);
  }

  const read = options.clusterWorker ? askPrimaryForMetrics() : () => registry.metrics();
  const handler: RequestHandler = async (_req, res) => {
    const text = await read();
    res.setHeader('content-type', registry.contentType);
    res.setHeader('cache-control', 'no-store');
    res.end(text);
  };
  return { observe, handler };
}

/** A worker's way to the aggregate: one IPC round trip to the primary per scrape. */
function askPrimaryForMetrics(): () => Promise<string> {
  let nextId = 0;
  const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  process.on('message', (message: unknown) => {
    if (!isMessage<MetricsReply>(message, METRICS_REPLY)) return;
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    clearTimeout(waiting.timer);
    if (message.text !== undefined) waiting.resolve(message.text);
    else waiting.reject(new Error(`cluster metrics: ${message.error ?? 'no answer'}`));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error('cluster metrics: the primary did not answer in time'));
      }, CLUSTER_METRICS_TIMEOUT_MS);
      pending.set(id, { resolve, reject, timer });
      const request: MetricsRequest = { type: METRICS_REQUEST, id };
      if (!process.send) {
        pending.delete(id);
        clearTimeout(timer);
        reject(new Error('cluster metrics: no IPC channel to the primary'));
        return;
      }
      process.send(request, undefined, undefined, (error: Error | null) => {
        if (!error) return;
        pending.delete(id);
        clearTimeout(timer);
        reject(error);
      });
    });
}

/** In the cluster primary: answers each worker's request with the figures of all workers, summed by prom-client. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker: Worker, message: unknown) => {
    if (!isMessage<MetricsRequest>(message, METRICS_REQUEST)) return;
    const answer = (reply: MetricsReply) => {
      if (worker.isConnected()) worker.send(reply, undefined, () => {});
    };
    aggregator.clusterMetrics().then(
      (text) => answer({ type: METRICS_REPLY, id: message.id, text }),
      (error: unknown) => answer({ type: METRICS_REPLY, id: message.id, error: error instanceof Error ? error.message : String(error) }),
    );
  });
}

function isMessage<T extends { type: string; id: number }>(message: unknown, type: T['type']): message is T {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type && typeof (message as { id?: unknown }).id === 'number';
}

/**
 * Every worker reads the same store (Redis, or the cluster primary's counts), so across workers the figure is the
 * same and the largest is taken (the freshest: spend only grows within a period), never the sum.
 */
function spendGauges(registers: NonNullable<CounterConfiguration<string>['registers']>, spend: CallerSpend): void {
  new Gauge({
    name: 'gateway_caller_spend_usd',
    help: "USD a routes.yaml caller with a budget has spent so far in the current UTC day or month (period), as the store that counts its budget holds it (store: redis with REDIS_URL, else memory: this process's, or the cluster primary's).",
    labelNames: ['caller', 'period', 'store'] as const,
    registers,
    aggregator: 'max',
    async collect() {
      const samples = await spend.read();
      this.reset();
      for (const sample of samples) this.labels(sample.caller, sample.period, spend.store).set(sample.usd);
    },
  });
  new Gauge({
    name: 'gateway_caller_budget_usd',
    help: "A routes.yaml caller's budget (budget.usd_per_day or usd_per_month) for the UTC period.",
    labelNames: ['caller', 'period'] as const,
    registers,
    aggregator: 'max',
    collect() {
      for (const budget of spend.budgets) this.labels(budget.caller, budget.period).set(budget.usd);
    },
  });
}

/** A counter whose total another part keeps (`read`): read at scrape time, and only its growth added. */
function countedElsewhere(registers: NonNullable<CounterConfiguration<string>['registers']>, name: string, help: string, read: () => number): void {
  let seen = 0;
  new Counter({
    name,
    help,
    registers,
    collect() {
      const now = read();
      this.inc(now - seen);
      seen = now;
    },
  });
}
