// Provider-native fields that make the provider act on the world or bill differently pass only where routes.yaml
// allow_fields lists them; a request for more output than the model can write is a 400; an image detail is dropped.
import OpenAI, { BadRequestError } from 'openai';
import t from 'tap';
import { compileRoutes } from '../../scripts/routes/compile-routes.js';
import { formatProblem } from '../../scripts/routes/problem.js';
import { refusal, translate, withFields, BUDGET_MODEL, PLAIN_MODEL } from '../helpers/anthropic-request.js';
import { startGateway } from '../helpers/gateway.js';
import { ANTHROPIC_ROUTES, message, startMockAnthropic } from '../helpers/mock-anthropic.js';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';

const MCP = [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'example' }];
const GATED = { mcp_servers: MCP, container: 'container_011', service_tier: 'priority' } as const;

t.test('a gated Anthropic field is refused with a 400 naming it unless the model allows it, and then passes as sent', async (t) => {
  for (const [field, value] of Object.entries(GATED)) {
    const refused = refusal(withFields({ [field]: value }));
    t.equal(refused.status, 400);
    t.match(refused.body, { gateway_code: 'unsupported_parameter', param: field, message: new RegExp(`^'${field}' is not allowed for this model: .*allow_fields`) });
    const allowed = translate(withFields({ [field]: value }), { ...BUDGET_MODEL, allowedFields: [field] });
    t.strictSame(allowed.json[field], value, `${field} passes where it is allowed`);
    t.match(refusal(withFields({ [field]: value }), { ...BUDGET_MODEL, allowedFields: Object.keys(GATED).filter((other) => other !== field) }).body, { param: field }, `${field}: allowing the others does not allow it`);
  }
  t.equal(translate(withFields({ service_tier: 'standard_only' })).json['service_tier'], 'standard_only', 'standard_only cannot cost more: it passes');
  const thinking = { type: 'enabled', budget_tokens: 2048 };
  t.match(refusal(withFields({ thinking }), PLAIN_MODEL).body, { param: 'thinking', message: /reasoning: none/ }, 'thinking on a model declared not to think');
  t.strictSame(translate(withFields({ thinking }), { ...PLAIN_MODEL, allowedFields: ['thinking'] }).json['thinking'], thinking);
  t.strictSame(translate(withFields({ thinking })).json['thinking'], thinking, 'on a thinking model it is the native form of reasoning: it passes');
});

t.test('max_tokens or max_completion_tokens above max_output_tokens is a 400 naming it, for either dialect', async (t) => {
  for (const param of ['max_tokens', 'max_completion_tokens']) {
    t.match(refusal(withFields({ [param]: 64001 })).body, { gateway_code: 'invalid_request', param, message: `'${param}' 64001 is more than this model can write (64000, its max_output_tokens): send at most that, or leave it out.` });
    t.equal(translate(withFields({ [param]: 64000 })).json['max_tokens'], 64000, `${param} at the limit passes`);
  }
  const upstream = await startMockUpstream((_req, res) => sendJson(res, 200, completionBody('gpt-capped')));
  const routes = `version: 1
providers:
  mock:
    base_url: http://127.0.0.1:9/v1
    base_url_env: MOCK_BASE_URL
    api_key_env: MOCK_API_KEY
models:
  mock/capped: { upstream_model: gpt-capped, max_output_tokens: 1000 }
  mock/open:
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;
  const gateway = await startGateway({ routes, upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const client = new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 });
  const error = await client.chat.completions.create({ model: 'mock/capped', messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 1001 }).catch((caught: unknown) => caught);
  t.ok(error instanceof BadRequestError);
  t.match((error as BadRequestError).error, { param: 'max_completion_tokens', gateway_code: 'invalid_request' });
  t.equal(upstream.requests.length, 0, 'nothing went upstream');
  await client.chat.completions.create({ model: 'mock/capped', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1000 });
  await client.chat.completions.create({ model: 'mock/open', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10_000_000 });
  t.equal(upstream.requests.length, 2, 'at the limit, or on a model without max_output_tokens, the request goes');
});

t.test('through the gateway: an OpenAI vision client sending detail "high" works against a Claude route; mcp_servers passes only where allowed', async (t) => {
  const anthropic = await startMockAnthropic(() => ({ json: message([{ type: 'text', text: 'A cat.' }], 'end_turn') }));
  const routes = ANTHROPIC_ROUTES.replace('  claude/plain: { upstream_model: claude-plain-1, max_output_tokens: 8192 }', '  claude/plain: { upstream_model: claude-plain-1, max_output_tokens: 8192, allow_fields: [mcp_servers] }');
  const gateway = await startGateway({ routes, upstreamOrigin: anthropic.origin });
  t.teardown(() => Promise.all([gateway.close(), anthropic.close()]));
  const client = new OpenAI({ baseURL: `${gateway.origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 });

  const vision = await client.chat.completions.create({
    model: 'claude/budget',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } }] }],
  });
  t.equal(vision.choices[0]!.message.content, 'A cat.');
  t.strictSame(anthropic.bodies[0]!['messages'], [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }] }], 'the detail was dropped');

  const refused = await client.chat.completions.create({ model: 'claude/budget', messages: [{ role: 'user', content: 'hi' }], mcp_servers: MCP } as never).catch((caught: unknown) => caught);
  t.ok(refused instanceof BadRequestError, 'a typed 400');
  t.match((refused as BadRequestError).error, { param: 'mcp_servers', gateway_code: 'unsupported_parameter' });
  t.equal(anthropic.bodies.length, 1, 'the refused request never reached the provider');

  await client.chat.completions.create({ model: 'claude/plain', messages: [{ role: 'user', content: 'hi' }], mcp_servers: MCP } as never);
  t.strictSame(anthropic.bodies[1]!['mcp_servers'], MCP, 'allowed on claude/plain: sent as given');
  t.strictSame(anthropic.violations, []);
});

t.test('allow_fields compiles per provider and model (the model adds to its provider) and names only gated fields', async (t) => {
  const routes = (providerLine: string, modelEntry: string) => `version: 1
providers:
  claude:
    dialect: anthropic
    base_url: https://api.anthropic.com/v1
${providerLine}  plain:
    base_url: https://api.example.com/v1
models:
  claude/a: { max_output_tokens: 1000${modelEntry} }
  claude/b: { max_output_tokens: 1000 }
  plain/x: { allow_fields: [mcp_servers] }
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;
  const bad = compileRoutes(routes('    allow_fields: [mcp_servers, web_search]\n', ', allow_fields: [container]'));
  t.strictSame(bad.ok ? [] : bad.problems.map((problem) => formatProblem('routes.yaml', problem)), [
    'routes.yaml:6:33: providers.claude.allow_fields[1]: "web_search" is not a field the anthropic dialect gates: it gates only container, mcp_servers, server_tools, service_tier, thinking',
    'routes.yaml:12:29: models."plain/x".allow_fields[0]: "mcp_servers" is not a field the openai dialect gates: it gates only built_in_tools, service_tier, web_search_options',
  ]);
  const good = compileRoutes(routes('    allow_fields: [mcp_servers]\n', ', allow_fields: [container, mcp_servers]').replace('  plain/x: { allow_fields: [mcp_servers] }\n', '  plain/x:\n'));
  t.ok(good.ok);
  if (!good.ok) return;
  t.strictSame(good.tables.models['claude/a']!.allowFields, ['mcp_servers', 'container']);
  t.strictSame(good.tables.models['claude/b']!.allowFields, ['mcp_servers']);
  t.strictSame(good.tables.models['plain/x']!.allowFields, []);
});
