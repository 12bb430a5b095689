// Native POST /v1/messages to an anthropic route carries the caller's bytes, but what lets a caller spend or reach
// more on the gateway's account (mcp_servers, container, a priority tier, thinking on a model declared not to think,
// tools the provider runs) still passes only where routes.yaml allow_fields lists it, as on /v1/chat/completions.
import Anthropic, { BadRequestError } from '@anthropic-ai/sdk';
import t from 'tap';
import { startGateway } from '../../helpers/gateway.js';
import { ANTHROPIC_ROUTES, message, startMockAnthropic } from '../../helpers/mock-anthropic.js';

const MCP = [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'example' }];
const WEB_SEARCH = [{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }];
const CLIENT_TOOLS = [
  { name: 'get_weather', input_schema: { type: 'object', properties: {} } },
  { type: 'bash_20250124', name: 'bash' },
];

t.test('gated fields and server tools on native /v1/messages: a 400 in Anthropic\'s shape naming them unless allow_fields lists them', async (t) => {
  const anthropic = await startMockAnthropic(() => ({ json: message([{ type: 'text', text: 'Done.' }], 'end_turn') }));
  const routes = ANTHROPIC_ROUTES.replace(
    '  claude/plain: { upstream_model: claude-plain-1, max_output_tokens: 8192 }',
    '  claude/open: { upstream_model: claude-open-1, max_output_tokens: 8192, allow_fields: [mcp_servers, container, service_tier, thinking, server_tools] }\n  claude/plain: { upstream_model: claude-plain-1, max_output_tokens: 8192 }',
  );
  t.teardown(() => anthropic.close());
  const gateway = await startGateway({ routes, upstreamOrigin: anthropic.origin });
  t.teardown(() => gateway.close());
  const client = new Anthropic({ baseURL: gateway.origin, apiKey: 'sk-caller', maxRetries: 0 });
  const base = { max_tokens: 100, messages: [{ role: 'user' as const, content: 'Hi' }] };

  const refusals: [string, Record<string, unknown>][] = [
    ['mcp_servers', { mcp_servers: MCP }],
    ['container', { container: 'container_011' }],
    ['service_tier', { service_tier: 'priority' }],
    ['thinking', { thinking: { type: 'enabled', budget_tokens: 2048 } }],
    ['tools[1].type', { tools: [CLIENT_TOOLS[0], ...WEB_SEARCH] }],
  ];
  for (const [param, fields] of refusals) {
    const error = await client.messages.create({ ...base, model: 'claude/plain', ...fields } as never).catch((caught: unknown) => caught);
    t.ok(error instanceof BadRequestError, `${param}: a typed 400`);
    t.match((error as BadRequestError).error, { type: 'error', error: { type: 'invalid_request_error', message: /is not allowed for this model: .*allow_fields/ } }, `${param}: Anthropic's error shape`);
    t.match((error as BadRequestError).error, { error: { param, gateway_code: 'unsupported_parameter' } }, `${param}: named`);
  }
  t.equal(anthropic.bodies.length, 0, 'no refused request reached the provider');

  await client.messages.create({ ...base, model: 'claude/plain', service_tier: 'standard_only', tools: CLIENT_TOOLS } as never);
  t.equal(anthropic.bodies.length, 1, 'client tools (custom, bash) and standard_only pass without allow_fields');
  await client.messages.create({ ...base, model: 'claude/budget', thinking: { type: 'enabled', budget_tokens: 2048 } });
  t.strictSame(anthropic.bodies[1]!['thinking'], { type: 'enabled', budget_tokens: 2048 }, 'thinking on a thinking model is its native form: it passes');

  const everything = { mcp_servers: MCP, container: 'container_011', service_tier: 'priority', thinking: { type: 'enabled', budget_tokens: 2048 }, tools: WEB_SEARCH };
  await client.messages.create({ ...base, model: 'claude/open', ...everything } as never);
  const sent = anthropic.bodies[2]!;
  for (const [key, value] of Object.entries(everything)) t.strictSame(sent[key], value, `${key} passes as sent where allowed`);

  const counted = await client.messages.countTokens({ model: 'claude/plain', messages: base.messages, tools: WEB_SEARCH } as never).catch((caught: unknown) => caught);
  t.notOk(counted instanceof BadRequestError, 'counting tokens spends nothing: server tools are not refused there');
});
