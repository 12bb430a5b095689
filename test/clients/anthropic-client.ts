import OpenAI from 'openai';
import type { Test } from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { ANTHROPIC_ROUTES, startMockAnthropic, type AnthropicAnswer } from '../helpers/mock-anthropic.js';

/**
 * A mock Anthropic provider, a gateway routing to it, and the official openai client pointed at the gateway,
 * all closed when the test ends. Call `wireChecked()` last: every request the provider saw met the Messages
 * API contract.
 */
export async function setUpAnthropicClient(t: Test, answer: (body: Record<string, unknown>, call: number) => AnthropicAnswer) {
  const upstream = await startMockAnthropic(answer);
  const gateway = await startGateway({ routes: ANTHROPIC_ROUTES, upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const client = new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller-not-forwarded', maxRetries: 0 });
  const wireChecked = () => t.strictSame(upstream.violations, [], 'path, x-api-key, anthropic-version, JSON body');
  return { upstream, gateway, client, wireChecked };
}
