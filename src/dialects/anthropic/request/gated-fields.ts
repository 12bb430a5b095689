import { anthropicDefaults } from '../defaults.js';
import type { ReasoningKind } from './reasoning.js';
import { unsupported } from './json-node.js';

/** Why each gated field needs routes.yaml's word: what it lets a caller do on the gateway's account. */
const WHY: Readonly<Record<string, string>> = {
  container: 'it runs code in a container on the provider',
  mcp_servers: 'it has the provider call remote MCP servers',
  service_tier: 'it can bill at a higher tier',
  thinking: "it makes a model declared with reasoning: none think (and bill thinking tokens)",
  server_tools: 'the provider runs it (searches, fetches pages, runs code) and bills it',
};

/** A body's top-level members: a present value, or undefined when absent or null (OpenAI clients send null for "not set"). */
export interface GivenFields {
  given(key: string): { readonly value: unknown } | undefined;
}

/**
 * Tool types the provider runs itself (server tools): searching, fetching, running code, calling MCP servers.
 * Client tools (no type, `custom`, or Anthropic-defined tools the caller executes such as bash or the text
 * editor) pass.
 */
const SERVER_TOOL = /^(web_search|web_fetch|code_execution|mcp_toolset|tool_search)/;

/**
 * Refuses, naming it, a gated native field (anthropicDefaults.gatedFields) that routes.yaml `allow_fields` does
 * not list for this model or its provider. Exceptions that cannot cost more: `service_tier: "standard_only"`,
 * and `thinking` on a model whose reasoning is not none (a thinking model, where it is the native form of reasoning).
 */
export function refuseGatedFields(root: GivenFields, model: { readonly reasoning: ReasoningKind; readonly allowedFields?: readonly string[] }): void {
  const allowed = new Set(model.allowedFields ?? []);
  for (const field of anthropicDefaults.gatedFields) {
    if (field === 'server_tools') continue; // only the native Messages body can carry them (refuseServerTools)
    const node = root.given(field);
    if (!node || allowed.has(field)) continue;
    if (field === 'service_tier' && node.value === 'standard_only') continue;
    if (field === 'thinking' && model.reasoning !== 'none') continue;
    throw unsupported(field, `'${field}' is not allowed for this model: ${WHY[field] ?? 'it is gated'}, so routes.yaml must allow it (allow_fields on the model or its provider).`);
  }
}

/**
 * Native Messages bodies only (a chat request has no server tools): refuses, naming it, a tool the provider would
 * run and bill unless routes.yaml allow_fields lists `server_tools` for this model or its provider.
 */
export function refuseServerTools(tools: unknown, allowedFields: readonly string[] | undefined): void {
  if (!Array.isArray(tools) || allowedFields?.includes('server_tools')) return;
  tools.forEach((tool: unknown, index) => {
    const type = typeof tool === 'object' && tool !== null ? (tool as Record<string, unknown>)['type'] : undefined;
    if (typeof type === 'string' && SERVER_TOOL.test(type)) {
      throw unsupported(`tools[${index}].type`, `'tools[${index}].type' "${type.slice(0, 64)}" is not allowed for this model: ${WHY['server_tools']}, so routes.yaml must allow it (allow_fields: [server_tools] on the model or its provider).`);
    }
  });
}
