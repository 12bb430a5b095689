import type { ErrorObject } from 'ajv';
import { gatewayError, type GatewayError } from '../wire/gateway-error.js';

/**
 * Turns ajv's report of the first schema violation into an OpenAI-style 400:
 * `param` is the offending path (`messages[0].role`), the message says what to send instead.
 */
export function describeValidationError(errors: readonly ErrorObject[]): GatewayError {
  // Under anyOf, ajv lists each failed branch before the anyOf itself; the anyOf speaks for them.
  const anyOf = errors.find((error) => error.keyword === 'anyOf');
  const first = anyOf ?? errors[0];
  if (!first) return gatewayError('invalid_request', 'The request body is invalid.');
  const path = first.instancePath;
  if (path === '' && first.keyword === 'type') {
    return gatewayError('invalid_request', 'The request body must be a JSON object.', { param: null });
  }
  const param = toParam(path);
  switch (first.keyword) {
    case 'required': {
      const missing = String(first.params['missingProperty']);
      return invalid(`Missing required parameter: '${joinParam(param, missing)}'.`, joinParam(param, missing), 'missing_required_parameter');
    }
    case 'type':
      return invalid(`Invalid type for '${param}': expected ${typeNames(first.params['type'])}.`, param, 'invalid_type');
    case 'minItems':
      return invalid(`Invalid '${param}': empty array. Expected an array with at least ${first.params['limit']} item.`, param, 'empty_array');
    case 'enum':
      return invalid(`Invalid value for '${param}': expected one of ${allowed(first.params['allowedValues'])}.`, param, 'invalid_value');
    case 'anyOf': {
      const branches = errors.filter((error) => error !== anyOf && error.instancePath === path);
      const options = branches.flatMap((error) =>
        error.keyword === 'type'
          ? [typeNames(error.params['type'])]
          : error.keyword === 'enum'
            ? [allowed(error.params['allowedValues'])]
            : error.keyword === 'minimum'
              ? [`a number ${String(error.params['comparison'])} ${String(error.params['limit'])}`]
              : [],
      );
      // "a string" says nothing next to the list of the strings allowed.
      const listed = new Set(branches.flatMap((error) => (error.keyword === 'enum' ? (error.params['allowedValues'] as unknown[]).map((value) => typeNames(typeof value)) : [])));
      const named = [...new Set(options)].filter((option) => !listed.has(option));
      const expected = named.length > 0 ? `: expected ${named.join(', or ')}` : '';
      const nested = errors.find((error) => error !== anyOf && error.instancePath.length > path.length);
      if (nested) return describeValidationError([nested]);
      return invalid(`Invalid value for '${param}'${expected}.`, param, 'invalid_value');
    }
    default:
      return invalid(`Invalid value for '${param}': ${first.message ?? 'not allowed'}.`, param, 'invalid_value');
  }
}

function invalid(message: string, param: string, code: string): GatewayError {
  return gatewayError('invalid_request', message, { param, code });
}

/** `/messages/0/role` -> `messages[0].role` */
export function toParam(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((param, segment) => (/^\d+$/.test(segment) ? `${param}[${segment}]` : joinParam(param, segment)), '');
}

function joinParam(param: string, key: string): string {
  return param === '' ? key : `${param}.${key}`;
}

function typeNames(type: unknown): string {
  const article: Record<string, string> = { string: 'a string', boolean: 'a boolean', array: 'an array', object: 'an object', null: 'null', number: 'a number', integer: 'an integer' };
  const names = String(type).split(',');
  return names.map((name) => article[name] ?? name).join(' or ');
}

function allowed(values: unknown): string {
  return (values as unknown[]).map((value) => JSON.stringify(value)).join(', ');
}
