// The routes of `npm run bench:callers`: the bench's mock provider, and (with limits) one caller whose limits never
// refuse during the bench, so every request pays the whole admission and settlement.
import { createHash } from 'node:crypto';
import { BENCH_CALLER_KEY } from './bench-protocol.js';

export { BENCH_CALLER_KEY };

export function benchCallersRoutes(limits: boolean): string {
  const callers = limits
    ? `callers:
  bench-team:
    keys: [sha256:${createHash('sha256').update(BENCH_CALLER_KEY).digest('hex')}]
    models: [bench/llama3.2]
    limits: { requests_per_minute: 1000000000, tokens_per_minute: 1000000000000, concurrent_requests: 100000 }
    budget: { usd_per_month: 1000000000 }
`
    : '';
  return `version: 1
providers:
  bench:
    base_url: http://127.0.0.1:9/v1
    base_url_env: BENCH_PROVIDER_URL
models:
  bench/llama3.2: { upstream_model: llama3.2, price: { input_per_mtok: 0.4, output_per_mtok: 1.6 } }
${callers}errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;
}
