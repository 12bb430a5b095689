/**
 * Counters and histograms counted per request at the cost of a few Map lookups, read by prom-client only at scrape.
 *
 * prom-client's own metrics rebuild and hash a label object on every call, even through a bound child (issue 25,
 * item 7): here a series is found by its label values, one Map level each, and prom-client's registry (and
 * the cluster's AggregatorRegistry) formats what `get()` returns exactly as it formats its own Counter and Histogram.
 */

/** The shape prom-client's registry reads from a metric (what its Counter's and Histogram's `get()` return). */
interface MetricValue {
  readonly labels: Record<string, string | number>;
  readonly value: number;
  readonly metricName?: string;
}

interface Series<T> {
  readonly labels: Record<string, string>;
  readonly state: T;
}

/** Series by their label values, one Map level per label (see Tally.series). */
type Level<T> = Map<string, Level<T> | Series<T>>;

abstract class Tally<T> {
  readonly aggregator = 'sum';
  readonly #root: Level<T> = new Map();
  readonly #all: Series<T>[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
    private readonly labelNames: readonly string[],
  ) {}

  /**
   * The series of these label values (in labelNames' order), made on first use. One Map level per value: the values
   * are mostly the same string objects each time (roster names, ids), whose hash V8 keeps, where a joined key would
   * be a new string to hash on every call.
   */
  protected series(values: readonly string[]): T {
    let level = this.#root;
    const last = values.length - 1;
    for (let index = 0; index < last; index++) {
      let next = level.get(values[index]!) as Level<T> | undefined;
      if (!next) level.set(values[index]!, (next = new Map()));
      level = next;
    }
    let series = level.get(values[last]!) as Series<T> | undefined;
    if (!series) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((name, index) => (labels[name] = values[index] ?? ''));
      series = { labels, state: this.fresh() };
      level.set(values[last]!, series);
      this.#all.push(series);
    }
    return series.state;
  }

  protected abstract fresh(): T;
  protected abstract export(series: Series<T>, into: MetricValue[]): void;

  /** Read by prom-client's registry at scrape time. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: MetricValue[] }> {
    const values: MetricValue[] = [];
    for (const series of this.#all) this.export(series, values);
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

export class CounterTally extends Tally<{ value: number }> {
  constructor(name: string, help: string, labelNames: readonly string[]) {
    super(name, help, 'counter', labelNames);
  }

  inc(values: readonly string[], by = 1): void {
    this.series(values).value += by;
  }

  protected fresh() {
    return { value: 0 };
  }

  protected export({ labels, state }: Series<{ value: number }>, into: MetricValue[]): void {
    into.push({ labels, value: state.value });
  }
}

interface Buckets {
  /** Observations per bucket (not cumulative); the last slot counts those above every bound. */
  readonly counts: number[];
  sum: number;
  count: number;
}

export class HistogramTally extends Tally<Buckets> {
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
  ) {
    super(name, help, 'histogram', labelNames);
  }

  observe(values: readonly string[], value: number): void {
    const buckets = this.series(values);
    let slot = 0;
    while (slot < this.bounds.length && value > this.bounds[slot]!) slot++;
    buckets.counts[slot]!++;
    buckets.sum += value;
    buckets.count++;
  }

  protected fresh(): Buckets {
    return { counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
  }

  /** As prom-client's Histogram exports: cumulative buckets with `le` first, +Inf, then _sum and _count. */
  protected export({ labels, state }: Series<Buckets>, into: MetricValue[]): void {
    let cumulative = 0;
    this.bounds.forEach((bound, slot) => {
      cumulative += state.counts[slot]!;
      into.push({ labels: { le: bound, ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
    });
    into.push({ labels: { le: '+Inf', ...labels }, value: state.count, metricName: `${this.name}_bucket` });
    into.push({ labels, value: state.sum, metricName: `${this.name}_sum` });
    into.push({ labels, value: state.count, metricName: `${this.name}_count` });
  }
}
