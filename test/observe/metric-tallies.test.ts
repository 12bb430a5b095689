// The gateway's per-request metrics are tallies (src/observe/tallies.ts) that prom-client reads at scrape time:
// /metrics must print them exactly as prom-client's own Counter and Histogram print the same observations.
import t from 'tap';
import { AggregatorRegistry, Counter, Histogram, Registry, type Metric } from 'prom-client';
import { CounterTally, HistogramTally } from '../../src/observe/tallies.js';

const BOUNDS = [0.05, 0.5, 5];
const LABELS = ['model', 'provider', 'stream'] as const;
const observations: [string, string, string, number][] = [
  ['mock/a', 'mock', 'true', 0.01],
  ['mock/a', 'mock', 'true', 0.05],
  ['mock/a', 'mock', 'false', 0.7],
  ['x/"quoted"\\back\nline', 'x', 'false', 99],
  ['mock/a', 'mock', 'true', 3],
];

t.test('a counter tally and a histogram tally print as prom-client prints its own', async (t) => {
  const theirs = new Registry();
  const counter = new Counter({ name: 'c_total', help: 'Requests.', labelNames: LABELS, registers: [theirs] });
  const histogram = new Histogram({ name: 'h_seconds', help: 'Durations.', labelNames: LABELS, buckets: BOUNDS, registers: [theirs] });
  const ours = new Registry();
  const counterTally = new CounterTally('c_total', 'Requests.', LABELS);
  const histogramTally = new HistogramTally('h_seconds', 'Durations.', LABELS, BOUNDS);
  ours.registerMetric(counterTally as unknown as Metric);
  ours.registerMetric(histogramTally as unknown as Metric);
  for (const [model, provider, stream, seconds] of observations) {
    counter.labels(model, provider, stream).inc(seconds > 1 ? 2 : 1);
    counterTally.inc([model, provider, stream], seconds > 1 ? 2 : 1);
    histogram.labels(model, provider, stream).observe(seconds);
    histogramTally.observe([model, provider, stream], seconds);
  }
  const text = await ours.metrics();
  t.equal(text, await theirs.metrics());
  t.match(text, 'h_seconds_bucket{le="0.05",model="mock/a",provider="mock",stream="true"} 2');
  t.match(text, 'c_total{model="mock/a",provider="mock",stream="true"} 4');
  // In a cluster the primary sums every worker's figures (as read by getMetricsAsJSON): two workers alike here.
  const summed = async (registry: Registry) => AggregatorRegistry.aggregate([await registry.getMetricsAsJSON(), await registry.getMetricsAsJSON()]).metrics();
  const aggregated = await summed(ours);
  t.equal(aggregated, await summed(theirs), 'what a cluster primary aggregates prints the same too');
  t.match(aggregated, 'h_seconds_bucket{le="5",model="mock/a",provider="mock",stream="true"} 6');
});
