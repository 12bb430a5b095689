import { invalid, isRecord, jsonObject, shown, unsupported, type JsonNode } from './json-node.js';

/**
 * OpenAI fields that would change the answer and that Anthropic cannot honour, with the values that
 * ask for nothing (OpenAI's defaults): those are accepted and dropped, any other is refused.
 */
const ANSWER_CHANGING: readonly [string, (value: unknown) => boolean, string][] = [
  ['n', (value) => value === 1, 'Anthropic returns one choice: send n 1 or leave it out.'],
  ['logprobs', (value) => value === false, 'Anthropic returns no log probabilities.'],
  ['top_logprobs', (value) => value === 0, 'Anthropic returns no log probabilities.'],
  ['logit_bias', (value) => isRecord(value) && Object.keys(value).length === 0, 'Anthropic has no logit bias.'],
  ['presence_penalty', (value) => value === 0, 'Anthropic has no presence penalty: send 0 or leave it out.'],
  ['frequency_penalty', (value) => value === 0, 'Anthropic has no frequency penalty: send 0 or leave it out.'],
];

/** Refuses, naming the field, any request that asks for what Anthropic cannot give. */
export function refuseUnanswerable(root: JsonNode): void {
  for (const [key, isDefault, why] of ANSWER_CHANGING) {
    const node = root.given(key);
    if (node && !isDefault(node.value)) throw unsupported(key, `'${key}' ${shown(node.value)} is not supported for this model: ${why}`);
  }
}

/** `response_format`: text → nothing; json_schema → `output_config.format`; json_object and others refused. */
export function responseFormatOf(format: JsonNode | undefined): string | undefined {
  if (!format) return undefined;
  const type = format.field('type');
  if (type?.value === 'text') return undefined;
  if (type?.value === 'json_schema') {
    const schema = format.field('json_schema')?.given('schema');
    if (!schema?.isObject) {
      throw invalid('response_format.json_schema.schema', `Missing 'response_format.json_schema.schema': Anthropic needs the JSON Schema of the answer.`);
    }
    return jsonObject([['type', '"json_schema"'], ['schema', schema.raw]]);
  }
  if (type?.value === 'json_object') {
    throw unsupported('response_format', `'response_format' json_object is not supported for this model: send json_schema with the answer's schema.`);
  }
  throw unsupported('response_format.type', `'response_format.type' ${shown(type?.value)} has no Anthropic form: use text or json_schema.`);
}
