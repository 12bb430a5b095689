import type { RuntimeEndpoint, RuntimeProvider } from './runtime-providers.js';

/**
 * One of the provider's ready endpoints not yet tried in this request (`tried`: a bit per endpoint index),
 * drawn by weight; undefined when every one has been tried. A single-endpoint provider costs one test.
 */
export function chooseEndpoint(provider: RuntimeProvider, tried: number): RuntimeEndpoint | undefined {
  const ready = provider.ready;
  if (ready.length === 1) return (tried & (1 << ready[0]!.index)) === 0 ? ready[0] : undefined;
  let total = 0;
  for (const endpoint of ready) if ((tried & (1 << endpoint.index)) === 0) total += endpoint.weight;
  if (total === 0) return undefined;
  let draw = Math.random() * total;
  let last: RuntimeEndpoint | undefined;
  for (const endpoint of ready) {
    if ((tried & (1 << endpoint.index)) !== 0) continue;
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
