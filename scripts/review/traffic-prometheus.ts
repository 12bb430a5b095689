import type { ModelTokens, TrafficCell, TrafficData } from './traffic.js';

const QUERY_TIMEOUT_MS = 30_000;

/**
 * Traffic from Prometheus scraping the gateways: `increase()` over the window of gateway_requests_total and
 * gateway_cost_usd_total by model and caller, and of gateway_tokens_total by model and kind. increase() handles
 * restarts and extrapolates to the window's edges, so the figures are Prometheus' estimates: requests are rounded.
 * A URL with `user:password@` is sent as basic auth (fetch refuses credentials in a URL), and never printed.
 */
export async function trafficFromPrometheus(base: string, window: string): Promise<TrafficData> {
  const url = new URL(base);
  const headers: Record<string, string> = {};
  if (url.username !== '' || url.password !== '') {
    headers['authorization'] = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  const shown = `${url.origin}${url.pathname.replace(/\/$/, '')}`;
  const query = async (promql: string) => {
    const endpoint = new URL(`${url.pathname.replace(/\/$/, '')}/api/v1/query`, url);
    endpoint.searchParams.set('query', promql);
    let body: { status?: string; error?: string; data?: { resultType?: string; result?: { metric: Record<string, string>; value: [number, string] }[] } };
    try {
      const response = await fetch(endpoint, { headers, signal: AbortSignal.timeout(QUERY_TIMEOUT_MS) });
      body = (await response.json()) as typeof body;
      if (body.status !== 'success') throw new Error(`HTTP ${response.status}: ${body.error ?? 'no success'}`);
    } catch (error) {
      throw new Error(`Prometheus ${shown}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (body.data?.resultType !== 'vector') throw new Error(`Prometheus ${shown}: ${promql} gave a ${body.data?.resultType}, not a vector`);
    return (body.data.result ?? []).map((each) => ({ metric: each.metric, value: Number(each.value[1]) }));
  };
  const [requests, cost, tokens] = await Promise.all([
    query(`sum by (model, caller) (increase(gateway_requests_total{model!=""}[${window}]))`),
    query(`sum by (model, caller) (increase(gateway_cost_usd_total{model!=""}[${window}]))`),
    query(`sum by (model, kind) (increase(gateway_tokens_total[${window}]))`),
  ]);
  const key = (metric: Record<string, string>) => `${metric['caller'] ?? ''}\u0000${metric['model'] ?? ''}`;
  const costs = new Map(cost.map((each) => [key(each.metric), Number.isFinite(each.value) ? each.value : 0]));
  const cells: TrafficCell[] = requests
    .map((each) => ({ model: each.metric['model'] ?? '', caller: each.metric['caller'] ?? '', requests: Number.isFinite(each.value) ? Math.round(each.value) : 0, costUsd: costs.get(key(each.metric)) ?? 0 }))
    .filter((cell) => cell.requests > 0);
  const byModel = new Map<string, ModelTokens>();
  for (const { metric, value } of tokens) {
    const model = metric['model'] ?? '';
    const kind = metric['kind'];
    if (kind !== 'prompt' && kind !== 'cached' && kind !== 'completion') continue;
    let counted = byModel.get(model);
    if (!counted) byModel.set(model, (counted = { prompt: 0, cached: 0, completion: 0 }));
    counted[kind] += Number.isFinite(value) ? Math.round(value) : 0;
  }
  return { source: `Prometheus ${shown}`, cells, tokens: byModel };
}
