import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningGateway } from '../helpers/gateway.js';
import { parseExposition, valueOf } from '../helpers/prometheus.js';

/** Waits for a condition (checked every 50 ms): the event a test needs, with `timeoutMs` only as the failure bound. */
export async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(50);
  }
}

/** gateway_limit_store_up as /metrics says it: 1 while the gateway counts in Redis, 0 while in the process. */
export async function storeUp(gateway: RunningGateway): Promise<number | undefined> {
  return valueOf(parseExposition(await (await fetch(`${gateway.origin}/metrics`)).text()), 'gateway_limit_store_up');
}
