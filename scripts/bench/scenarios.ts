// What `npm run bench` sends: one request body per scenario, the models it names, and what every answer must carry.

/** BENCH_ROUTE: the route of the OpenAI-dialect scenarios, two endpoints (default) or one endpoint and no fallback. */
export const ONE_ENDPOINT = process.env['BENCH_ROUTE'] === 'one-endpoint';
if (!['', 'one-endpoint', 'two-endpoints'].includes(process.env['BENCH_ROUTE'] ?? '')) {
  process.stderr.write('bench: BENCH_ROUTE must be one-endpoint or two-endpoints\n');
  process.exit(2);
}
/** The routing string of the bench's OpenAI-dialect provider (bench-routes.yaml: `bench` has two endpoints, `bench-one` one). */
export const GATEWAY_MODEL = ONE_ENDPOINT ? 'bench-one/llama3.2' : 'bench/llama3.2';
/** Its upstream name: what the mock answers with, so what the caller of a proxy (which rewrites nothing) sees. */
export const UPSTREAM_MODEL = 'llama3.2';
/** The routing string of the bench's anthropic-dialect provider. */
export const ANTHROPIC_MODEL = 'bench-anthropic/claude';

const MESSAGES = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'Say hello in one short sentence.' },
];

export interface Scenario {
  readonly id: string;
  readonly label: string;
  /** Chunk events the caller gets per stream (before [DONE]); null: not streamed. */
  readonly events: number | null;
  readonly body: string;
  /** The model named in the body (the routing string through the gateway). */
  readonly model: string;
  /** Only the gateway can serve it (the proxies speak no Anthropic). */
  readonly gatewayOnly: boolean;
}

export const isGatewayTarget = (name: string) => name === 'gateway';
export const servesScenario = (targetName: string, scenario: Scenario) => !scenario.gatewayOnly || isGatewayTarget(targetName);

/** The model a target's every answer (every chunk) must carry: the routing string through the gateway, the upstream name through a proxy. */
export function expectedModel(scenario: Scenario, targetName: string): string {
  return isGatewayTarget(targetName) ? scenario.model : UPSTREAM_MODEL;
}

function openAIScenario(id: string, label: string, events: number | null): Scenario {
  // max_tokens is forwarded untouched by every target; the mock streams that many events.
  const request = events === null ? { model: GATEWAY_MODEL, messages: MESSAGES, max_tokens: 64 } : { model: GATEWAY_MODEL, messages: MESSAGES, stream: true, max_tokens: events };
  return { id, label, events, body: JSON.stringify(request), model: GATEWAY_MODEL, gatewayOnly: false };
}

function anthropicScenario(id: string, label: string, events: number): Scenario {
  // The mock answers max_tokens text deltas; the gateway sends the caller one chunk each, plus the role and the finish chunks.
  const request = { model: ANTHROPIC_MODEL, messages: MESSAGES, stream: true, max_tokens: events - 2 };
  return { id, label, events, body: JSON.stringify(request), model: ANTHROPIC_MODEL, gatewayOnly: true };
}

export const SCENARIOS: readonly Scenario[] = [
  openAIScenario('json', 'non-streamed', null),
  openAIScenario('sse20', 'streamed, 20 events', 20),
  openAIScenario('sse1000', 'streamed, 1,000 events', 1000),
  anthropicScenario('anthropic20', 'Anthropic dialect, 20 events', 20),
  anthropicScenario('anthropic1000', 'Anthropic dialect, 1,000 events', 1000),
];

export const scenario = (id: string): Scenario => SCENARIOS.find((s) => s.id === id)!;
