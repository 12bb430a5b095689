import { setTimeout as sleep } from 'node:timers/promises';
import type { Test } from 'tap';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { startUsageMock } from '../helpers/callers-routes.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
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

/** A real redis-server, a usage mock and a gateway counting callers there, connected; all stopped when `t` ends. */
export async function gatewayOnRedis(t: Test, routes: string, usage: { prompt: number; completion: number; cached?: number }): Promise<{ gateway: RunningGateway; redis: RedisServer }> {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const mock = await startUsageMock(usage);
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({ routes, upstreamOrigin: mock.upstream.origin, redisUrl: redis.url });
  t.teardown(() => gateway.close());
  await until('connected to Redis', async () => (await storeUp(gateway)) === 1);
  return { gateway, redis };
}
