import { Ajv, type ErrorObject } from 'ajv';
import type { RoutesFile } from '../../src/generated/types/routes.js';
import { readSchema } from '../schemas.js';
import type { LoadedRoutes } from './load-routes.js';
import { formatPath, type Problem } from './problem.js';

/** Checks the shape of a routes file against schemas/routes.schema.json; every violation, with its position. */
export function validateRoutesShape(loaded: LoadedRoutes): { problems: Problem[]; routes: RoutesFile | undefined } {
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  const validate = ajv.compile<RoutesFile>(readSchema('routes.schema.json'));
  if (validate(loaded.data)) return { problems: [], routes: loaded.data };
  // A value that matches no branch of an anyOf is reported once, by the anyOf, not once per branch.
  const errors = (validate.errors ?? []).filter((error) => !error.schemaPath.includes('/anyOf/'));
  const problems = errors.flatMap((error) => describe(error, loaded));
  return { problems, routes: undefined };
}

function describe(error: ErrorObject, loaded: LoadedRoutes): Problem[] {
  const path = listIndices(loaded.data, error.instancePath.split('/').slice(1).map(unescapePointer));
  const where = path.length > 0 ? `${formatPath(path)}: ` : '';
  const at = (p: readonly (string | number)[], mode: 'key' | 'value', message: string): Problem[] => [{ ...loaded.locate(p, mode), message }];
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(error.params['additionalProperty']);
      return at([...path, key], 'key', `${where}unknown key ${JSON.stringify(key)}`);
    }
    case 'required':
      return at(path, path.length > 0 ? 'key' : 'value', `${where || 'top level: '}missing required key ${JSON.stringify(error.params['missingProperty'])}`);
    case 'propertyNames':
      // ajv also reports the inner keyword (the pattern) for the same key; that one carries the message.
      return [];
    case 'pattern':
      if (error.propertyName !== undefined) {
        return at([...path, error.propertyName], 'key', `${where}invalid key ${JSON.stringify(error.propertyName)}: ${keyRule(path)}`);
      }
      return at(path, 'value', `${where}${JSON.stringify(valueAt(loaded.data, path))} ${PATTERN_HINTS[String(error.params['pattern'])] ?? `does not match ${error.params['pattern']}`}`);
    case 'maxLength':
      // Limits that keep every log line short (docs/observability.md, Logs): these strings are logged as they are.
      if (error.propertyName !== undefined) {
        return at([...path, error.propertyName], 'key', `${where}key ${JSON.stringify(`${error.propertyName.slice(0, 40)}…`)} is longer than ${error.params['limit']} characters`);
      }
      return at(path, 'value', `${where}is longer than ${error.params['limit']} characters`);
    case 'const':
      return at(path, 'value', `${where}must be ${JSON.stringify(error.params['allowedValue'])}`);
    case 'enum':
      return at(path, 'value', `${where}must be one of ${(error.params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`);
    case 'minItems':
      return at(path, 'value', `${where}must list at least ${error.params['limit']} item (leave the key out instead)`);
    case 'minProperties':
      return at(path, 'value', `${where}must have at least ${error.params['limit']} entry`);
    case 'anyOf':
      return at(path, 'value', `${where}${ANY_OF_HINTS[path.at(-1) ?? ''] ?? 'is invalid'}`);
    case 'type':
      if (path.length === 0) return at(path, 'value', 'top level: must be a mapping with version, providers, models and errors');
      return at(path, 'value', `${where}${error.message ?? 'is invalid'}`);
    default:
      return at(path, 'value', `${where}${error.message ?? 'is invalid'}`);
  }
}

/** Plain words for the values that may take more than one form, by key. */
const ANY_OF_HINTS: Record<string, string> = {
  auth: "must be bearer, google, aws or { header: NAME }, NAME a header name (letters, digits and !#$%&'*+.^_`|~-)",
};

/** Plain words for the schema's value patterns. */
const PATTERN_HINTS: Record<string, string> = {
  '^[A-Z_][A-Z0-9_]*$': 'is not an environment variable name (A-Z, 0-9 and _, not starting with a digit)',
  '^https?://[^\\s]+$': 'is not an http:// or https:// URL',
  '^[a-z][a-z0-9_]*$': 'is not a code (lower-case letters, digits and _, starting with a letter)',
  '^[\\t\\x20-\\x7e]*$': 'is not a valid header value (printable ASCII only)',
  '^[^\\s]+$': 'must not contain white space',
  '^[a-z]{2}(-[a-z]+)+-\\d+$': 'is not an AWS region (like us-east-1, eu-central-1 or us-gov-west-1)',
  '^sha256:[0-9a-fA-F]{64}$': 'is not a key digest: sha256: and 64 hex characters (`npm run key -- NAME` prints one)',
};

function keyRule(path: readonly (string | number)[]): string {
  if (path.length === 1 && path[0] === 'providers') return 'a provider id is lower-case letters, digits and dashes, starting with a letter or digit';
  if (path.at(-1) === 'errors') return 'an error key is an HTTP status ("429"), a class ("4xx", "5xx") or "default" (top level only)';
  if (path.at(-1) === 'headers') return 'not a valid HTTP header name';
  return 'not allowed here';
}

function valueAt(data: unknown, path: readonly (string | number)[]): unknown {
  return path.reduce<unknown>((node, key) => (node !== null && typeof node === 'object' ? (node as Record<string | number, unknown>)[key] : undefined), data);
}

/** A segment that indexes a list becomes a number, so it is located in the list and printed as `[i]`. */
function listIndices(data: unknown, path: readonly string[]): (string | number)[] {
  let node = data;
  return path.map((segment) => {
    const index = Array.isArray(node) ? Number(segment) : undefined;
    node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[segment] : undefined;
    return index ?? segment;
  });
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}
