import { gatedFieldError, refuseGatedTools } from '../../gated.js';
import { anthropicDefaults } from '../defaults.js';
import type { ReasoningKind } from './reasoning.js';

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
const isServerTool = (type: unknown) => typeof type === 'string' && SERVER_TOOL.test(type);

/** The gated fields that are top-level members; server_tools names tools, which only a native Messages body carries. */
const TOP_LEVEL_FIELDS = anthropicDefaults.gatedFields.filter((field) => field !== 'server_tools');

/**
 * Refuses, naming it, a gated native field (anthropicDefaults.gatedFields) that routes.yaml `allow_fields` does
 * not list for this model or its provider. Exceptions that cannot cost more: `service_tier: "standard_only"`,
 * and `thinking` on a model whose reasoning is not none (a thinking model, where it is the native form of reasoning).
 */
export function refuseGatedFields(root: GivenFields, model: { readonly reasoning: ReasoningKind; readonly allowedFields?: readonly string[] }): void {
  const allowed = new Set(model.allowedFields ?? []);
  for (const field of TOP_LEVEL_FIELDS) {
    const node = root.given(field);
    if (!node || allowed.has(field)) continue;
    if (field === 'service_tier' && node.value === 'standard_only') continue;
    if (field === 'thinking' && model.reasoning !== 'none') continue;
    throw gatedFieldError(field, WHY[field] ?? 'it is gated');
  }
}

/**
 * Native Messages bodies only (a chat request has no server tools): refuses, naming it, a tool the provider would
 * run and bill unless routes.yaml allow_fields lists `server_tools` for this model or its provider.
 */
export function refuseServerTools(tools: unknown, allowedFields: readonly string[] | undefined): void {
  if (allowedFields?.includes('server_tools')) return;
  refuseGatedTools(tools, isServerTool, (param, type) => `'${param}' "${(type as string).slice(0, 64)}" is not allowed for this model: ${WHY['server_tools']}, so routes.yaml must allow it (allow_fields: [server_tools] on the model or its provider).`);
}
