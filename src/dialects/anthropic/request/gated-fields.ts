import { anthropicDefaults } from '../defaults.js';
import type { ReasoningKind } from './reasoning.js';
import { unsupported, type JsonNode } from './json-node.js';

/** Why each gated field needs routes.yaml's word: what it lets a caller do on the gateway's account. */
const WHY: Readonly<Record<string, string>> = {
  container: 'it runs code in a container on the provider',
  mcp_servers: 'it has the provider call remote MCP servers',
  service_tier: 'it can bill at a higher tier',
  thinking: "it makes a model declared with reasoning: none think (and bill thinking tokens)",
};

/**
 * Refuses, naming it, a gated native field (anthropicDefaults.gatedFields) that routes.yaml `allow_fields` does
 * not list for this model or its provider. Exceptions that cannot cost more: `service_tier: "standard_only"`,
 * and `thinking` on a model whose reasoning is not none (a thinking model, where it is the native form of reasoning).
 */
export function refuseGatedFields(root: JsonNode, model: { readonly reasoning: ReasoningKind; readonly allowedFields?: readonly string[] }): void {
  const allowed = new Set(model.allowedFields ?? []);
  for (const field of anthropicDefaults.gatedFields) {
    const node = root.given(field);
    if (!node || allowed.has(field)) continue;
    if (field === 'service_tier' && node.value === 'standard_only') continue;
    if (field === 'thinking' && model.reasoning !== 'none') continue;
    throw unsupported(field, `'${field}' is not allowed for this model: ${WHY[field] ?? 'it is gated'}, so routes.yaml must allow it (allow_fields on the model or its provider).`);
  }
}
