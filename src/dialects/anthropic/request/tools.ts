import { cacheControlOf, invalid, jsonObject, shown, unsupported, type JsonNode } from './json-node.js';

/** What a tool without `parameters` takes: nothing. */
const NO_PARAMETERS = '{"type":"object","properties":{}}';

/** `tools` → Anthropic tool definitions; the parameter schemas, `strict` and `cache_control` kept byte for byte. */
export function toolsOf(tools: JsonNode): string[] {
  if (!Array.isArray(tools.value)) throw invalid(tools.path, `Invalid '${tools.path}': expected an array.`);
  return tools.items().map((tool) => {
    const type = tool.field('type')?.value;
    if (type !== 'function') throw unsupported(tool.path, `Tool type ${shown(type)} at '${tool.path}' has no Anthropic form: only function tools do.`);
    const fn = tool.field('function');
    const name = fn?.field('name');
    if (!name?.isString) throw invalid(`${tool.path}.function.name`, `Invalid '${tool.path}.function.name': expected a string.`);
    const entries: [string, string][] = [['name', name.raw]];
    const description = fn!.given('description');
    if (description) entries.push(['description', description.raw]);
    const parameters = fn!.given('parameters');
    if (parameters && !parameters.isObject) throw invalid(parameters.path, `Invalid '${parameters.path}': expected a JSON Schema object.`);
    entries.push(['input_schema', parameters ? parameters.raw : NO_PARAMETERS]);
    const strict = fn!.given('strict');
    if (strict) entries.push(['strict', strict.raw]);
    // cache_control on the tool (the common form) or inside its function.
    entries.push(...(tool.given('cache_control') ? cacheControlOf(tool) : cacheControlOf(fn!)));
    return jsonObject(entries);
  });
}

/**
 * `tool_choice` and `parallel_tool_calls` → Anthropic's `tool_choice`, or undefined when it should be absent.
 * Without tools, `auto` and `none` say nothing and are dropped; asking for a tool there is refused.
 */
export function toolChoiceOf(choice: JsonNode | undefined, parallel: JsonNode | undefined, hasTools: boolean): string | undefined {
  if (parallel && typeof parallel.value !== 'boolean') throw invalid(parallel.path, `Invalid '${parallel.path}': expected a boolean.`);
  const serial = parallel?.value === false;
  const word = choice?.value;
  if (!hasTools) {
    if (choice === undefined || word === 'auto' || word === 'none') return undefined;
    throw invalid(choice.path, `Invalid '${choice.path}': it asks for a tool call, but the request has no tools.`);
  }
  const disable: [string, string][] = serial ? [['disable_parallel_tool_use', 'true']] : [];
  if (choice === undefined) return serial ? jsonObject([['type', '"auto"'], ...disable]) : undefined;
  if (word === 'auto') return jsonObject([['type', '"auto"'], ...disable]);
  if (word === 'required') return jsonObject([['type', '"any"'], ...disable]);
  if (word === 'none') return jsonObject([['type', '"none"']]);
  const type = choice.field('type')?.value;
  const name = choice.field('function')?.field('name');
  if (type !== 'function') throw unsupported(choice.path, `tool_choice of type ${shown(type)} has no Anthropic form: use auto, required, none or a named function.`);
  if (!name?.isString) throw invalid(`${choice.path}.function.name`, `Invalid '${choice.path}.function.name': expected a string.`);
  return jsonObject([['type', '"tool"'], ['name', name.raw], ...disable]);
}
