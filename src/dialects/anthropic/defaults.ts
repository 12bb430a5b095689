import type { DialectDefaults } from '../dialect.js';

/**
 * Anthropic's Messages API takes the key as `x-api-key` and requires the API version on every request;
 * 2023-06-01 is the current one (routes.yaml `headers` may pin another).
 */
export const anthropicDefaults: DialectDefaults = {
  auth: { header: 'x-api-key' },
  headers: { 'anthropic-version': '2023-06-01' },
  // Passed through as sent, each lets a caller spend or reach more on the gateway's account: remote MCP servers
  // the provider calls, a code-execution container, a pricier service tier, thinking on a model declared not to.
  gatedFields: ['container', 'mcp_servers', 'server_tools', 'service_tier', 'thinking'],
};
