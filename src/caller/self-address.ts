import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { RuntimeProvider } from '../routing/runtime-providers.js';

/** Where the server listens, as node:net reports it. */
export interface ListeningAddress {
  readonly address: string;
  readonly port: number;
}

/** A name that does not resolve within this long is not waited for: the check only warns. */
const LOOKUP_TIMEOUT_MS = 2000;

/**
 * One warning per provider endpoint whose base URL resolves to the address this gateway listens on: its requests
 * would come back here (and be refused as a loop, 508). A URL that reaches the gateway another way (a Service, a
 * load balancer, another port forwarded here) is not seen here; Via catches those at the first hop back.
 */
export async function selfPointingWarnings(providers: Iterable<RuntimeProvider>, listening: ListeningAddress): Promise<string[]> {
  const own = ownAddresses(listening.address);
  const warnings: string[] = [];
  for (const provider of providers) {
    for (const endpoint of provider.endpoints) {
      const url = new URL(endpoint.baseUrl);
      const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
      if (port !== listening.port) continue;
      const addresses = await resolve(url.hostname.replace(/^\[|\]$/g, ''));
      if (!addresses.some((address) => own.has(normalize(address)))) continue;
      const label = provider.endpoints.length === 1 ? `provider "${provider.id}"` : `provider "${provider.id}" endpoint "${endpoint.name}"`;
      warnings.push(
        `${label}: its base URL ${url.origin} is this gateway's own address (port ${listening.port}): its requests would come back here and be refused as a loop (508 loop_detected); point it at the provider`,
      );
    }
  }
  return warnings;
}

/** The addresses a connection to this listener can be made to: every local one when bound to all interfaces. */
function ownAddresses(bound: string): Set<string> {
  const address = normalize(bound);
  if (address !== '0.0.0.0' && address !== '::') return new Set([address]);
  const own = new Set(['0.0.0.0', '::', '127.0.0.1', '::1']);
  for (const list of Object.values(networkInterfaces())) for (const entry of list ?? []) own.add(normalize(entry.address));
  return own;
}

async function resolve(host: string): Promise<string[]> {
  if (isIP(host)) return [host];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<[]>((done) => (timer = setTimeout(() => done([]), LOOKUP_TIMEOUT_MS)));
  try {
    const found = lookup(host, { all: true }).then(
      (addresses) => addresses.map((entry) => entry.address),
      () => [],
    );
    return await Promise.race([found, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** IPv4-mapped IPv6 as IPv4, lower case, so the same address compares equal however it was written. */
function normalize(address: string): string {
  const lower = address.toLowerCase();
  return lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4 ? lower.slice(7) : lower;
}
