import { invalid, jsonObject, shown, unsupported, type JsonNode } from '../../anthropic/request/json-node.js';

/**
 * `tools` as one Gemini tool of functionDeclarations. The caller's JSON Schema goes as
 * `parametersJsonSchema` byte for byte: full JSON Schema ($ref, additionalProperties, $schema), where
 * the older `parameters` field takes an OpenAPI subset and refuses those. `strict` has no Gemini form and
 * changes nothing there (Gemini follows the declared schema): dropped.
 */
export function functionDeclarationsOf(tools: JsonNode): string | undefined {
  const declarations = tools.items().map((tool) => {
    if (tool.field('type')?.value !== 'function') {
      throw unsupported(`${tool.path}.type`, `Tool type ${shown(tool.field('type')?.value)} at '${tool.path}' has no Gemini form: send function tools.`);
    }
    const fn = tool.field('function');
    const name = fn?.field('name');
    if (!fn?.isObject || !name?.isString) throw invalid(`${tool.path}.function.name`, `Invalid '${tool.path}.function.name': expected a string.`);
    const entries: [string, string][] = [['name', name.raw]];
    const description = fn.given('description');
    if (description) entries.push(['description', description.raw]);
    const parameters = fn.given('parameters');
    if (parameters) {
      if (!parameters.isObject) throw invalid(parameters.path, `Invalid '${parameters.path}': expected a JSON Schema object.`);
      entries.push(['parametersJsonSchema', parameters.raw]);
    }
    return jsonObject(entries);
  });
  return declarations.length > 0 ? `[{"functionDeclarations":[${declarations.join(',')}]}]` : undefined;
}

const MODES: Readonly<Record<string, string>> = { auto: 'AUTO', none: 'NONE', required: 'ANY' };

/** `tool_choice` as `toolConfig.functionCallingConfig`: auto/none/required → AUTO/NONE/ANY, a named function → ANY limited to it. */
export function toolConfigOf(choice: JsonNode | undefined): string | undefined {
  if (!choice) return undefined;
  if (typeof choice.value === 'string' && Object.hasOwn(MODES, choice.value)) return `{"functionCallingConfig":{"mode":"${MODES[choice.value]}"}}`;
  const name = choice.field('function')?.field('name');
  if (choice.field('type')?.value === 'function' && name?.isString) {
    return `{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":[${name.raw}]}}`;
  }
  throw invalid('tool_choice', `Invalid 'tool_choice': expected auto, none, required or {"type":"function","function":{"name":…}}.`);
}
