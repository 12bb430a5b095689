import { invalid, jsonObject, shown, unsupported, type JsonNode } from '../../anthropic/request/json-node.js';

/**
 * `tools` and `tool_choice` as Converse's toolConfig: each function as a toolSpec whose inputSchema.json is the
 * caller's JSON Schema byte for byte; auto → {auto: {}}, required → {any: {}}, a named function → {tool: {name}},
 * none → no toolConfig at all (Converse has no "none"), which a conversation holding tool blocks cannot go
 * without. `strict` has no Converse form and changes nothing there: dropped. Undefined when no tools are sent.
 */
export function toolConfigOf(tools: JsonNode | undefined, choice: JsonNode | undefined, toolBlocks: boolean): string | undefined {
  const specs = tools ? tools.items().map(toolSpec) : [];
  const mode = choiceOf(choice);
  if (mode === 'none') {
    if (toolBlocks) throw unsupported('tool_choice', `'tool_choice' "none" has no Bedrock form for a conversation that holds tool calls or results: Bedrock needs the tools declared then; send "auto".`);
    return undefined;
  }
  if (specs.length === 0) {
    if (toolBlocks) throw invalid('tools', `Missing 'tools': Bedrock needs the tools declared when the conversation holds tool calls or results.`);
    if (mode !== undefined && mode !== '{"auto":{}}') throw invalid('tool_choice', `Invalid 'tool_choice': it asks for a tool call, but no tools are sent.`);
    return undefined;
  }
  return jsonObject([['tools', `[${specs.join(',')}]`], ...(mode ? [['toolChoice', mode] as [string, string]] : [])]);
}

function toolSpec(tool: JsonNode): string {
  if (tool.field('type')?.value !== 'function') {
    throw unsupported(`${tool.path}.type`, `Tool type ${shown(tool.field('type')?.value)} at '${tool.path}' has no Bedrock form: send function tools.`);
  }
  const fn = tool.field('function');
  const name = fn?.field('name');
  if (!fn?.isObject || !name?.isString) throw invalid(`${tool.path}.function.name`, `Invalid '${tool.path}.function.name': expected a string.`);
  const entries: [string, string][] = [['name', name.raw]];
  const description = fn.given('description');
  if (description) {
    if (!description.isString) throw invalid(description.path, `Invalid '${description.path}': expected a string.`);
    entries.push(['description', description.raw]);
  }
  const parameters = fn.given('parameters');
  if (parameters && !parameters.isObject) throw invalid(parameters.path, `Invalid '${parameters.path}': expected a JSON Schema object.`);
  // Converse requires an input schema; a function without parameters takes an empty object.
  entries.push(['inputSchema', `{"json":${parameters ? parameters.raw : '{"type":"object","properties":{}}'}}`]);
  return `{"toolSpec":${jsonObject(entries)}}`;
}

/** tool_choice as Converse's toolChoice (JSON), `none`, or undefined when not given. */
function choiceOf(choice: JsonNode | undefined): string | undefined {
  if (!choice) return undefined;
  if (choice.value === 'auto') return '{"auto":{}}';
  if (choice.value === 'required') return '{"any":{}}';
  if (choice.value === 'none') return 'none';
  const name = choice.field('function')?.field('name');
  if (choice.field('type')?.value === 'function' && name?.isString) return `{"tool":{"name":${name.raw}}}`;
  throw invalid('tool_choice', `Invalid 'tool_choice': expected auto, none, required or {"type":"function","function":{"name":…}}.`);
}
