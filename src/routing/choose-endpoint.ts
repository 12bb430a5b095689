import type { RuntimeEndpoint, RuntimeProvider } from './runtime-providers.js';

/**
 * One of the provider's ready endpoints not yet tried in this request (`tried`: a bit per endpoint index) and not
 * ejected by its breaker, drawn by weight; undefined when there is none. A single-endpoint provider costs two tests.
 */
export function chooseEndpoint(provider: RuntimeProvider, tried: number): RuntimeEndpoint | undefined {
  const ready = provider.ready;
  if (ready.length === 1) return usable(ready[0]!, tried) ? ready[0] : undefined;
  let total = 0;
  for (const endpoint of ready) if (usable(endpoint, tried)) total += endpoint.weight;
  if (total === 0) return undefined;
  let draw = Math.random() * total;
  let last: RuntimeEndpoint | undefined;
  for (const endpoint of ready) {
    if (!usable(endpoint, tried)) continue;
    last = endpoint;
    draw -= endpoint.weight;
    if (draw < 0) return endpoint;
  }
  return last; // rounding: the draw fell on the very end of the range
}

/** The bit of `endpoint` in a `tried` set. */
export function endpointBit(endpoint: RuntimeEndpoint): number {
  return 1 << endpoint.index;
}

function usable(endpoint: RuntimeEndpoint, tried: number): boolean {
  return (tried & (1 << endpoint.index)) === 0 && endpoint.breaker.mayTry();
}
